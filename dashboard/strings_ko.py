"""The Korean catalogue: the same keys and {fields} as `EN` in dashboard/strings.py (a test
keeps them in step). Written for the lab's graduate students and professor: plain, short,
with the terms people use in Korean labs (토큰, 캐시 적중률, 노드, 지연 시간) and product
names (LiteLLM, OpenCode) as they are.

One module because it is a catalogue, one entry per line in the order of `EN`: a
translator reads one language in one file.
"""

from __future__ import annotations

KO: dict[str, str] = {
    "title": "LLM 사용량",
    "subtitle": "연구실 모델을 누가, 얼마나, 어떤 도구로, 어느 노드에서 쓰는지 보여 줍니다.",
    # sidebar
    "filters.header": "필터",
    "filters.range": "기간",
    "range.24h": "최근 24시간",
    "range.7d": "최근 7일",
    "range.30d": "최근 30일",
    "range.month": "이번 달",
    "range.custom": "직접 지정",
    "filters.days": "날짜",
    "filters.timezone": "시간대",
    "filters.users": "사용자",
    "filters.models": "모델",
    "filters.nodes": "GPU 노드",
    "filters.clients": "클라이언트",
    "filters.all": "전체",
    "filters.notice": "링크에서 무시한 값: {notice}",
    "filters.not_here": "이 페이지는 현재 상태를 보여 줍니다. 기간과 필터는 개요와 노드 페이지에 적용되며 "
    "그대로 유지됩니다.",
    # cards
    "card.spend_usd": "비용",
    "card.requests": "요청",
    "card.total_tokens": "토큰",
    "card.cache_hit_rate": "캐시 적중률",
    "card.success_rate": "성공률",
    "card.latency_p50_ms": "지연 시간 중앙값",
    "card.month_to_date": "{period}(월초부터 같은 기간)",
    "card.vs": "{period} 대비",
    "card.period": "{start} – {end}",
    "card.not_compared": "직전 기간({period})의 요청이 {n}건으로 너무 적어 변화를 표시하지 않습니다.",
    "card.mine": "{who}: {value}",
    "card.mine_share": "{who}: {value} (전체의 {share})",
    # panels
    "panel.tokens": "토큰 추이",
    "panel.tokens.help": (
        "프롬프트 토큰은 캐시된 것과 캐시 안 된 것으로, 완성 토큰은 답변과 추론으로 나눠 보여 줍니다."
    ),
    "panel.cache": "프롬프트 캐싱",
    "panel.requests": "요청 추이",
    "panel.nodes": "GPU 노드",
    "panel.users": "사용자",
    "panel.users.hint": "막대를 클릭하면 그 사람이 페이지 전체에서 강조됩니다. 다시 클릭하면 해제됩니다.",
    "panel.clients": "클라이언트",
    "panel.matrix": "사용자·클라이언트별 요청",
    "panel.models": "모델",
    "highlight.active": "**{who}** 강조 중",
    "highlight.clear": "강조 해제",
    "users.split": "클라이언트별로 나누기",
    "users.not_split": "클라이언트 구분 없음",
    "users.by": "막대 기준",
    "users.by.spend": "비용",
    "users.by.tokens": "토큰",
    "users.by.requests": "요청",
    # series and axes
    "kind.uncached_prompt_tokens": "캐시 안 된 프롬프트",
    "kind.cached_tokens": "캐시된 프롬프트",
    "kind.answer_tokens": "답변",
    "kind.reasoning_tokens": "추론",
    "series.successes": "성공",
    "series.failures": "실패",
    "series.cache_hit_rate": "캐시 적중률",
    "series.cached": "캐시됨",
    "series.uncached": "캐시 안 됨",
    "series.everyone": "전체",
    "series.rest": "그 외 전체",
    "axis.tokens": "토큰",
    "axis.requests": "요청",
    "axis.share": "비율",
    "measure.requests": "요청",
    "measure.tokens": "토큰",
    "measure.spend": "비용",
    "hover.share": "비율",
    # freshness and empty states
    "fresh.caption": "최신 요청 {newest} · 마지막 ETL 실행 {run} · 시간대 {tz}",
    "fresh.stale": (
        "마지막으로 성공한 ETL 실행이 {age} 전에 끝났습니다(보통 몇 분마다 실행됩니다). cron 작업이 "
        "돌고 있는지 확인하세요. 최근 요청이 빠져 있을 수 있습니다."
    ),
    "fresh.failed": "마지막 ETL 실행이 실패했습니다: {error}",
    "fresh.failed_student": (
        "연구실 LiteLLM에서 마지막으로 복사하는 데 실패했습니다({when}). 보이는 가장 최근 요청은 "
        "{newest}의 것입니다. 이유는 연구실 관리자가 볼 수 있습니다."
    ),
    "fresh.stale_student": (
        "데이터가 {age} 전에 마지막으로 갱신되었습니다. 최근 요청이 아직 보이지 않을 수 있습니다."
    ),
    "fresh.incomplete": (
        "데이터 일부를 읽지 못해 이 페이지에서 빠졌습니다. 어떤 데이터인지는 연구실 관리자가 볼 수 있습니다."
    ),
    "fresh.damaged": (
        "다음 저장소 파일을 읽지 못해 모든 페이지에서 빠졌습니다: {files}. 조치 방법은 "
        "`python -m etl doctor`를 실행해 확인하세요. ETL이 그 날짜를 다시 쓸 때 파일을 교체합니다."
    ),
    "fresh.never": "없음",
    "fresh.reload_failed": "최신 데이터를 읽지 못했습니다({error}). 이전에 읽은 데이터를 보여 줍니다.",
    "empty.title": "저장소가 비어 있습니다",
    "empty.body": (
        "아직 LiteLLM에서 복사한 요청이 없습니다. LiteLLM 데이터베이스를 대상으로 ETL을 한 번 실행한 뒤 "
        "이 페이지를 새로 고치세요:"
    ),
    "empty.range": "이 기간과 조건에 해당하는 요청이 없습니다.",
    # peers and budgets (students)
    "panel.peers": "다른 사람과 비교",
    "panel.peers.anonymous": "다른 사람은 많이 쓴 순서대로 알파벳으로 표시되고, 이름은 본인 것만 보입니다.",
    "panel.peers.named": "연구실에서 공유하기로 한 대로 모든 사람의 합계를 이름과 함께 보여 줍니다.",
    "panel.peers.hidden": "연구실 설정에 따라 다른 사람의 사용량은 비공개이며, 본인 사용량만 보입니다.",
    "peers.you": "나",
    "names.other": "기타 {n}",
    "panel.budget": "내 예산",
    "chart.so_far.day": "오늘 현재까지",
    "chart.so_far.hour": "이번 시간 현재까지",
    "glance.more": "외 {count}개",
    "glance.tokens": "토큰 {tokens}",
    "glance.users.title": "가장 많이 사용한 사람",
    "glance.users.none": "이 기간에는 요청이 없습니다.",
    "glance.users.line": "**{user}** {amount}, {share}, 주로 {client} ({client_share})",
    "glance.users.line_no_client": "**{user}** {amount}, {share}",
    "glance.nodes.title": "노드 상태",
    "glance.nodes.window": "{start} – {end}, 직전 {days}일과 비교",
    "glance.nodes.none": "이 기간과 이전 기간에 요청을 처리한 노드가 없습니다.",
    "glance.nodes.down": "**{node}** 중단: 이 기간에 처리한 요청 없음, 이전 기간 {before}건",
    "glance.nodes.failing": "**{node}** 실패 많음: 요청 {requests}건 중 {rate} 실패 ({failures}건)",
    "glance.nodes.ttft_peers": (
        "**{node}** {model}에서 느림: 첫 토큰 p95 {value}, 다른 노드 {other} ({times}배)"
    ),
    "glance.nodes.ttft_before": (
        "**{node}** {model}에서 느림: 첫 토큰 p95 {value}, 이전 기간 {other} ({times}배)"
    ),
    "glance.nodes.speed_peers": "**{node}** {model}에서 느림: {value}, 다른 노드 {other}",
    "glance.nodes.speed_before": "**{node}** {model}에서 느림: {value}, 이전 기간 {other}",
    "glance.nodes.good": "양호: {nodes}",
    "glance.nodes.all_good": "모두 양호: {nodes}",
    "glance.nodes.too_few": "판단하기에 요청이 너무 적음({least}건 미만): {nodes}",
    "glance.api.title": "API 가격으로 환산한 비용",
    "glance.api.no_prices": "가격표가 없어 API 가격과 비교할 수 없습니다 (`prices.toml`).",
    "glance.api.nothing_priced": "이 기간의 모델 중 가격표에 API 가격이 있는 모델이 없습니다.",
    "glance.api.line": (
        "API 가격으로 **{api}**; 연구실 자체 집계(LiteLLM 지출)는 "
        "**{spend}**: API 가격이 그 **{ratio}배**입니다."
    ),
    "glance.api.line_no_spend": "API 가격으로 **{api}**; LiteLLM은 이 요청들에 지출을 집계하지 않습니다.",
    "glance.api.unpriced": "가격이 없는 모델의 요청 {requests}건은 포함되지 않았습니다.",
    "glance.budgets.title": "주의가 필요한 예산",
    "glance.budgets.no_keys": "아직 복사된 키 목록이 없어 확인할 예산이 없습니다.",
    "glance.budgets.none": "예산이 설정된 키가 없습니다.",
    "glance.budgets.fine": "예산 {keys}개 모두 한도 이내이며 초기화까지 유지됩니다.",
    "glance.budgets.over": "예산 초과: {keys}",
    "glance.budgets.over_key": "{key} {budget} 중 {spend}",
    "glance.budgets.at_risk": "위험: {keys}",
    "glance.budgets.runs_out": "{key} {when} 소진 예상, 초기화({reset}) 전",
    "glance.budgets.runs_out_no_reset": "{key} {when} 소진 예상",
    "glance.budgets.near": "{key} {share} 사용",
    "glance.refused.budget": "이 기간 예산 초과로 거부: {keys}",
    "glance.refused.rate": "이 기간 속도 제한으로 거부: {keys}",
    "budget.level.none": "예산 없음",
    "budget.level.ok": "예산 이내",
    "budget.level.near": "위험",
    "budget.level.over": "예산 초과",
    "budgets.level": "상태",
    "budget.key": "내 키",
    "budget.no_keys": "LiteLLM 키 목록에 아직 내 키가 없습니다(다음 ETL 실행 때 복사됩니다).",
    "budget.used": "{key}: {budget} 중 {spend} 사용({share}), {left} 남음",
    "budget.unlimited": "{key}: {spend} 사용, 예산 미설정",
    "budget.period_since": "{start}부터 LiteLLM이 집계한 값(아래 카드의 기간과 다름)",
    "budget.period_all": "키 생성 이후 LiteLLM이 집계한 값(아래 카드의 기간과 다름)",
    "budget.resets": "{when}에 초기화({every}마다)",
    "budget.limits": "한도: {limits}",
    "budget.no_limits": "속도 제한 없음",
    "budget.user": "키 전체에 걸친 개인 예산: {budget} 중 {spend}",
    "forecast.runs_out": (
        "지금 속도(하루 {per_day})라면 {when}쯤 소진됩니다. {reset} 초기화보다 {ahead} 이릅니다."
    ),
    "forecast.runs_out_no_reset": "지금 속도(하루 {per_day})라면 {when}쯤 소진되며, 초기화되지 않습니다.",
    "forecast.lasts": "지금 속도(하루 {per_day})라면 {reset} 초기화 때까지 남습니다.",
    "forecast.spent": "모두 사용했습니다. {reset}에 초기화됩니다.",
    "forecast.spent_no_reset": "모두 사용했으며 초기화되지 않습니다.",
    "forecast.reset_due": "{reset}에 초기화될 예정이었습니다. LiteLLM이 다음 예산 점검 때 초기화합니다.",
    "forecast.idle": "최근 7일간 사용이 없어 예측할 근거가 없습니다.",
    "forecast.no_budget": "소진될 예산이 없습니다.",
    "forecast.lasts_no_reset": "지금 속도(하루 {per_day})라면 100년 넘게 남습니다.",
    "forecast.invalid": "LiteLLM에 설정된 이 키의 예산 값을 읽을 수 없습니다({setting}). 예측하지 않습니다.",
    "forecast.invalid_person": (
        "LiteLLM에 설정된 내 예산 값을 읽을 수 없습니다({setting}). 예측하지 않습니다."
    ),
    "forecast.period_unread": "LiteLLM의 예산 주기({setting})를 읽을 수 없어 최근 7일 속도로 계산합니다.",
    "forecast.status.invalid": "예산 값 오류",
    "forecast.problem.budget": "예산 {setting}",
    "forecast.problem.spend": "사용액 {setting}",
    "forecast.problem.period": "주기 {setting}",
    "budgets.unreadable": "읽을 수 없는 LiteLLM 설정(예측에서 제외): {keys}",
    "budgets.and_more": "외 {count}개",
    "forecast.status.runs_out": "초기화 전 소진",
    "forecast.status.lasts": "초기화까지 충분",
    "forecast.status.spent": "모두 사용",
    "forecast.status.reset_due": "초기화 지연",
    "forecast.status.idle": "최근 사용 없음",
    "forecast.status.no_budget": "예산 없음",
    "budgets.pace": "하루 비용",
    "budgets.forecast": "지금 속도라면",
    "budgets.runs_out": "소진 예상",
    "budgets.every": "주기",
    "budgets.pace_note": (
        "지금 속도: 최근 7일(또는 마지막 초기화 이후)의 하루 비용으로 본, "
        "예산이 LiteLLM의 초기화 때까지 남는지 여부입니다."
    ),
    "student.no_requests": "아직 LiteLLM에서 복사된 내 요청이 없습니다. 첫 요청 이후 차트가 나타납니다.",
    "matrix.cell": "요청 {requests}건 · 토큰 {tokens} · 비용 {spend}",
    "matrix.none": "요청 없음",
    "limits.busiest": "최근 7일 중 가장 바빴던 1분: {parts}.",
    "limits.and": ", ",
    "limits.peak_tpm": "토큰 {value}(TPM 한도의 {share})",
    "limits.peak_rpm": "요청 {value}건(RPM 한도의 {share})",
    "limits.refused": (
        "최근 7일간 LiteLLM이 속도 제한으로 이 키의 요청 {n}건을 거절했습니다{kinds}. 마지막: {when}."
    ),
    "limits.kinds": "({kinds})",
    "limits.kind.tpm": "분당 토큰 초과 {n}건",
    "limits.kind.rpm": "분당 요청 초과 {n}건",
    "limits.kind.parallel": "동시 요청 초과 {n}건",
    "limits.elsewhere": "그중 {n}건은 이 키가 아닌 사용자나 팀의 한도 때문입니다.",
    "limits.title": "속도 제한, 최근 7일: 한도에 가까운 키부터",
    "limits.peak_tokens": "가장 바쁜 1분, 토큰",
    "limits.peak_requests": "가장 바쁜 1분, 요청",
    "limits.refused_col": "거절",
    "limits.last_refused": "마지막 거절",
    "limits.note": (
        "1분은 UTC 기준 시계의 1분입니다. LiteLLM은 성공한 요청의 토큰에서 캐시된 프롬프트 토큰을 뺀 값과, "
        "거절된 것을 포함한 모든 요청을 셉니다. "
        "60초 창이 요청 시점에 시작되므로 100% 미만인 분에도 거절될 수 있습니다."
    ),
    "api.title": "API 가격 기준",
    "api.help": (
        "이 요청들을 상용 API로 처리했다면 들었을 비용입니다. 연구실 가격표의 기준 가격"
        "(백만 토큰당: 캐시되지 않은 입력, 캐시된 입력, 출력; 추론은 출력)으로 계산합니다. "
        "실패한 요청은 LiteLLM과 같이 비용이 없습니다."
    ),
    "api.card": "API 가격 기준",
    "api.same_spend": "같은 요청의 비용",
    "api.ratio": "비용 대비 API 가격",
    "api.times": "{value}배",
    "api.caption": "가격표의 가격({taken} 기준). 가격 변경은 해당 날짜(UTC)부터 적용됩니다.",
    "api.unpriced": "요청 {n}건은 모델 가격이 없어 위 금액에 포함되지 않았습니다: {models}.",
    "api.not_priced": "가격 없음",
    "api.by.by_model": "모델별",
    "api.by.by_client": "클라이언트별",
    "api.by.by_user": "사용자별",
    "api.by.by_node": "노드별",
    "api.col.model": "모델",
    "api.col.client": "클라이언트",
    "api.col.user": "사용자",
    "api.col.node": "노드",
    "api.col.reference": "기준 모델",
    "api.col.requests": "요청",
    "api.col.spend": "비용",
    "api.col.api_cost": "API 가격 기준",
    "api.col.unpriced": "가격 없음",
    "budgets.people": "사용자별 개인 예산(키 전체)",
    # administrator budget table
    "budgets.summary": (
        "키 **{keys}**개 중 예산 초과 **{over}**개, 위험(80% 이상 사용 또는 초기화 전 소진 예상) **{near}**개"
    ),
    "budgets.refused": "거부 (7일)",
    "budgets.refused_help": (
        "키 목록을 복사하기 전 7일 동안 예산 "
        "소진(BudgetExceededError: 키, 사용자 또는 팀의 예산)으로 "
        "LiteLLM이 이 키의 요청을 거부한 횟수."
    ),
    "budgets.key": "키",
    "budgets.user": "사용자",
    "budgets.spend": "비용",
    "budgets.budget": "예산",
    "budgets.used": "사용률",
    "budgets.left": "남은 금액",
    "budgets.resets": "초기화",
    "budgets.last_active": "마지막 요청",
    "budgets.blocked": "차단됨",
    "budgets.expires": "만료",
    "budgets.note": (
        "비용과 예산은 LiteLLM이 계산한 값입니다(마지막 ETL 실행이 복사한 키 목록 기준). 시간대: {tz}."
    ),
    # pages, sign-in and sign-out
    "page.overview": "개요",
    "page.budgets": "예산",
    "page.my_usage": "내 사용량",
    "role.admin": "관리자",
    "role.student": "학생",
    "signout.who": "**{who}** ({role}) 로그인 중",
    "signout.button": "로그아웃",
    "signin.title": "로그인",
    "signin.subtitle": (
        "학생은 LiteLLM 키로 로그인하면 자신의 사용량과 예산을 볼 수 있습니다. 관리자는 비밀번호로 "
        "로그인하세요."
    ),
    "signin.student": "학생",
    "signin.admin": "관리자",
    "signin.key": "내 LiteLLM 키",
    "signin.key.help": (
        "연구실 모델을 쓸 때 사용하는 sk-... 키입니다. 지문(sha256)만 확인하며 키 자체는 저장하지 않습니다."
    ),
    "signin.password": "비밀번호",
    "signin.password.help": (
        "또는 일회용 코드: 서버에서 `python -m dashboard.auth one-time-code`를 실행하면 출력됩니다"
        "(10분 동안 한 번만 유효). 다른 로그인 시도가 거절되는 동안에도 들어갈 수 있습니다."
    ),
    "signin.submit": "로그인",
    "signin.wait": "로그인 실패가 너무 많습니다. {seconds}초 후에 다시 시도하세요.",
    "signin.no_admin_demo": "이 데모에서는 위의 버튼으로 관리자로 들어갈 수 있습니다.",
    "signin.no_admin": (
        "관리자 비밀번호가 설정되어 있지 않습니다. `python -m dashboard.auth hash-password`를 실행하고 "
        "출력된 줄을 `.streamlit/secrets.toml`에 넣으세요(README 참고)."
    ),
    "signin.refused.format": "LiteLLM 키가 아닙니다. 키는 sk-로 시작합니다.",
    "signin.refused.unknown": (
        "연구실 LiteLLM이 이 키를 받지 않습니다. 사용할 수 있어야 한다면 연구실 관리자에게 문의하세요."
    ),
    "signin.password_revoked": "관리자 비밀번호가 바뀌었거나 로그인 권한이 삭제되어 로그아웃되었습니다.",
    "signin.key_revoked": "로그인에 사용한 키를 연구실 LiteLLM이 더 이상 받지 않아 로그아웃되었습니다.",
    "signin.refused.password": "비밀번호가 틀렸습니다.",
    "progress.computing": (
        "{days}일 치 요청의 수치를 계산하는 중입니다: 재시작이나 새 ETL 실행 뒤 처음 보는 기간은 "
        "저장소를 읽고, 그다음부터는 바로 나옵니다."
    ),
    "signin.state_down": (
        "지금은 로그인할 수 없습니다: 대시보드가 세션 기록을 읽지 못합니다. 잠시 후 다시 "
        "시도하고, 계속되면 연구실 관리자에게 알려 주세요."
    ),
    # the nodes page
    "page.nodes": "노드",
    "nodes.verdicts": "노드별 판정",
    "nodes.verdicts.help": (
        "기간의 마지막 7일 동안을, 같은 모델을 서비스하는 다른 노드와 비교하고, 없으면 "
        "직전 7일과 비교합니다. 첫 토큰 p95가 두 배 이상이고 1초 이상 길거나 출력 속도 "
        "중앙값이 절반 이하이면 느림, 요청의 10%(최소 5건) 이상이 실패하면 실패 "
        "많음, 이전에는 처리했지만 이번에 처리한 요청이 없으면 중단, 요청 30건 "
        "미만(속도는 스트리밍 20건 미만)이면 판단 보류입니다."
    ),
    "nodes.tab.table": "노드와 모델",
    "nodes.tab.load": "부하",
    "nodes.tab.speed": "속도 추이",
    "nodes.tab.bands": "프롬프트 길이",
    "nodes.tab.cache": "프리픽스 캐싱",
    "nodes.tab.routing": "라우팅",
    "nodes.tab.failures": "실패",
    "nodes.table": "GPU 노드별",
    "nodes.models": "모델별",
    "nodes.table.help": (
        "첫 토큰 지연(TTFT)과 출력 속도는 스트리밍 요청만 셉니다. 출력 속도에서는 측정하기에 너무 짧은 "
        "답변(16토큰 미만이거나 첫 토큰 후 200ms 미만)을 뺍니다."
    ),
    "nodes.concurrency": "동시 처리 중인 요청",
    "nodes.concurrency.help": (
        "노드별로 구간마다 동시에 처리된 요청 수의 최댓값(선)이며, 각 요청의 시작과 끝으로 계산합니다. "
        "여러 구간에 걸친 요청은 구간마다 셉니다."
    ),
    "nodes.saturation": "동시 요청 수에 따른 지연 시간",
    "nodes.saturation.help": (
        "해당 노드에서 (자신을 포함해) 이만큼의 요청이 처리 중일 때 시작한 요청들의 지연 시간 중앙값입니다. "
        "선이 올라가는 지점부터 노드가 포화된 것입니다."
    ),
    "nodes.speed": "출력 속도 추이",
    "nodes.ttft": "첫 토큰 지연(TTFT) 추이",
    "nodes.failures": "오류 유형별 실패",
    "nodes.mine": "{who}의 요청",
    "axis.in_flight": "처리 중인 요청",
    "axis.tps": "토큰/초",
    "axis.ttft": "첫 토큰 지연",
    "axis.latency": "지연 시간",
    "axis.failures": "실패한 요청",
    "col.node": "노드",
    "col.model": "모델",
    "col.requests": "요청",
    "col.share": "비율",
    "col.failure_rate": "실패율",
    "col.ttft_p50_ms": "TTFT p50",
    "col.ttft_p95_ms": "TTFT p95",
    "col.output_tps_p50": "출력 속도 p50",
    "col.output_tps_p95": "출력 속도 p95",
    "col.speed_too_short": "너무 짧음",
    "col.latency_p50_ms": "지연 p50",
    "col.latency_p95_ms": "지연 p95",
    "col.prompt_p50": "프롬프트 p50",
    "col.prompt_p95": "프롬프트 p95",
    # download
    "download.header": "현재 화면 다운로드",
    "download.users": "사용자 (CSV)",
    "download.series": "기간별 추이 (CSV)",
    "download.nodes": "노드 (CSV)",
    "download.clients": "클라이언트별 사용자 (CSV)",
    "download.models": "모델 (CSV)",
    # the language switch
    "language.label": "언어",
    # card tooltips
    "card.spend_usd.help": "LiteLLM이 매긴 가격으로 계산한 비용(USD)입니다.",
    "card.requests.help": "기간 안의 요청 수이며, 실패한 요청도 포함합니다.",
    "card.total_tokens.help": "프롬프트 토큰과 완성 토큰의 합입니다.",
    "card.cache_hit_rate.help": "전체 프롬프트 토큰 중 캐시된 프롬프트 토큰의 비율입니다.",
    "card.success_rate.help": "전체 요청 중 성공한 요청의 비율입니다.",
    "card.latency_p50_ms.help": "요청 하나가 끝날 때까지 걸린 시간(end-to-end)의 중앙값입니다.",
    # units and dates
    "unit.ms": "{value}ms",
    "unit.s": "{value}초",
    "unit.min": "{value}분",
    "unit.h": "{value}시간",
    "unit.d": "{value}일",
    "unit.tok_s": "{value} 토큰/초",
    "unit.percent": "{value}%",
    "unit.pp": "{value}%p",
    "change.new": "신규",
    "period.s": "{n}초",
    "period.m": "{n}분",
    "period.h": "{n}시간",
    "period.d": "{n}일",
    "period.mo": "{n}개월",
    "date.minute": "{year}년 {month}월 {day}일 {hour:02d}:{minute:02d}",
    "date.day": "{year}년 {month}월 {day}일",
    # the year (and the English month's name) written as nothing
    "date.day_this_year": "{year!s:.0}{abbr!s:.0}{month}월 {day}일",
    # table cells
    "colfmt.percent": "%.1f%%",
    "col.tpm": "TPM",
    "col.rpm": "RPM",
    # chart hover texts
    "hover.tokens": "{value} 토큰",
    "hover.requests": "{value}건",
    "hover.failures_on": "{node}에서 {value}건",
    "failures.unknown": "알 수 없음",
    # Plotly date axes: 24-hour times with the day ("3일 15:00"), days as "12월 3일"
    "axis.date.hour": "%-d일 %H:%M",
    "axis.date.day": "%-m월 %-d일",
    "axis.date.month": "%Y년 %-m월",
    "axis.date.year": "%Y년",
    "axis.date.hover": "%Y년 %-m월 %-d일 %H:%M",
    "axis.date.hover_day": "%Y년 %-m월 %-d일",
    # peers
    "peers.student": "학생 {letter}",
    # what a link asked for that cannot be shown
    "notice.range": "range={value}은(는) {choices} 중 하나가 아니어서 최근 7일을 보여 줍니다.",
    "notice.custom": (
        "직접 지정한 기간에는 from=과 to=가 날짜(YYYY-MM-DD)로 있어야 하고, from이 to보다 앞서며 "
        "최대 {days}일이어야 합니다. 최근 7일을 보여 줍니다."
    ),
    "notice.tz": "tz={value}은(는) Asia/Seoul 같은 시간대가 아니어서 {default} 기준으로 보여 줍니다.",
    "notice.unknown": "데이터에 없는 {dimension} {values}은(는) 무시했습니다.",
    "notice.highlight": "highlight={value}은(는) 데이터에 있는 사용자가 아니어서 아무도 강조하지 않습니다.",
    "notice.by": "by={value}은(는) {choices} 중 하나가 아니어서 비용 기준으로 보여 줍니다.",
    "notice.lang": "lang={value}은(는) {choices} 중 하나가 아니어서 무시했습니다.",
    # operations: demo, ETL status
    "demo.banner": (
        "**데모 데이터**: 시뮬레이션한 연구실(13명, GPU 노드 3대)이며 실제 사용량이 아닙니다. "
        "LITELLM_DATABASE_URL을 설정하면 우리 연구실의 데이터를 볼 수 있습니다."
    ),
    "demo.building": "데모 연구실을 만드는 중: 시뮬레이션한 사용 로그를 ETL로 적재하고 있습니다...",
    "demo.signin": "관리자로 들어가거나, 아래의 가상 키 중 하나로 가상 학생으로 로그인해 보세요.",
    "demo.as_admin": "관리자로 데모 보기",
    "demo.student_keys": "가상 학생 키 (학생 탭에 붙여 넣으세요):",
    "page.etl_status": "ETL 상태",
    "col.prompt_tokens": "프롬프트 토큰",
    "col.cached_tokens": "캐시된 토큰",
    "col.cache_hit_rate": "캐시 적중률",
    "col.note": "비고",
    "axis.cache_hit_rate": "캐시 적중률",
    "col.node_model": "노드 · 모델",
    "col.band": "프롬프트 길이",
    "axis.band": "프롬프트 길이 (토큰)",
    "col.in_flight": "동시 요청",
    "col.latency_avg_ms": "지연 시간 평균",
    "col.requests_per_s": "초당 요청",
    "col.within_target": "p95 ≤ {target}",
    "unit.per_s": "{value}/초",
    "nodes.own_only": (
        "내 요청만 보여 줍니다: 노드가 나를 어떻게 처리했는지입니다. 동시 요청, "
        "비율, 부하 표는 모두의 요청이 아니라 내 요청만 셉니다."
    ),
    "value.unknown": "알 수 없음",
    "value.unknown_model": "알 수 없는 모델",
    "serving.none": "이 기간에 요청이 없습니다.",
    "serving.cache": "노드·모델별 프리픽스 캐싱",
    "serving.cache.help": (
        "프롬프트 토큰 중 캐시된 토큰의 비율: 서버가 프리픽스 캐시에서 찾은 프롬프트의"
        " 몫입니다. 캐시된 토큰을 전혀 보고하지 않는 모델은 보고하지 않는 모델과 "
        '구별할 수 없으므로 0 %가 아니라 "보고 없음"으로 표시합니다. 차트는 '
        "보고하는 노드의 토큰을 모델별로 합칩니다. 프롬프트가 없는 구간은 비워 둡니다."
    ),
    "serving.cache.left_out": "캐시된 토큰을 보고하지 않아 차트에서 뺀 모델: {models}",
    "serving.cache.not_reported": "보고 없음",
    "serving.cache.mine": "{who}의 적중률",
    "serving.cache.uncached_repeats": "반복 프롬프트, 적중 없음",
    "serving.cache.flagged": (
        "일부 모델은 반복되는 긴 프롬프트(한 키가 평균 1,000 토큰 이상으로 10회"
        " 이상 요청)를 받았지만 캐시된 토큰을 보고하지 않았습니다. 프리픽스 캐싱이 "
        "꺼져 있거나, 캐시 블록이 프롬프트에 비해 너무 크거나(일부 "
        "하이브리드/Mamba 구조), 서버가 캐시된 토큰을 보고하지 않는 경우입니다."
    ),
    "serving.bands": "프롬프트 길이별 지연 시간",
    "serving.bands.help": (
        "프롬프트 토큰 수로 요청을 묶었습니다. 첫 토큰까지 시간은 스트리밍 요청만 "
        "셉니다. 오른쪽으로 가파르게 오르는 선은 긴 프롬프트(프리필)에서 느려지는 "
        "노드나 모델입니다."
    ),
    "serving.bands.measure": "지표",
    "serving.load": "부하 표",
    "serving.load.help": (
        "동시 요청 수준: 요청이 시작될 때 노드에서 처리 중이던 요청 수(자신 "
        "포함)입니다. 초당 요청: 그 수준에서 시작된 요청 수를 노드가 그 수준에 머문"
        " 시간(초)으로 나눈 값입니다. 안정 동시성은 p95가 {target} 이내로 유지되는 "
        "가장 높은 수준입니다: 요청 대부분이 스트리밍된 수준은 첫 토큰까지 시간의 "
        "p95, 나머지는 지연 시간의 p95입니다."
    ),
    "serving.load.all_models": "모든 모델",
    "serving.load.stable": "동시 요청 **{level}**개까지 안정적입니다 ({measures} {target} 이내).",
    "serving.load.none_stable": (
        "가장 낮은 수준부터 {target}을 넘습니다: 동시 요청 {level}개에서 {measure} {value}."
    ),
    "serving.load.judged": (
        "요청 대부분이 스트리밍된 수준은 TTFT p95로, 그 밖의 수준은 지연 시간 p95로 "
        "{target} 목표와 비교합니다 (긴 답변은 빨리 시작해도 오래 걸립니다)."
    ),
    "serving.load.measure.ttft_p95_ms": "TTFT p95",
    "serving.load.measure.latency_p95_ms": "지연 시간 p95",
    "serving.load.and": " 및 ",
    "serving.load.short.ttft_p95_ms": "TTFT",
    "serving.load.short.latency_p95_ms": "지연",
    "serving.load.ok": "예 ({measure})",
    "serving.load.over": "초과 ({measure})",
    "serving.load.download": "부하 표 (CSV)",
    "axis.requests_share": "요청 비율",
    "series.failed": "실패한 요청",
    "nodes.failed_hover": "{node}: {n}건 실패",
    "col.failures": "실패",
    "col.routing_known": "라우팅 기록",
    "col.fallback_requests": "폴백 처리",
    "col.retried_requests": "재시도된 요청",
    "col.retries": "재시도",
    "col.fell_back_from": "요청한 모델",
    "col.overhead_p50_ms": "LiteLLM 오버헤드 p50",
    "col.overhead_p95_ms": "LiteLLM 오버헤드 p95",
    "serving.routing": "라우팅: 프록시의 부하 분산",
    "serving.routing.help": (
        "구간마다 각 노드가 처리한 요청의 비율입니다. X 표시는 노드 요청의 "
        "10 % 이상이 실패한 구간입니다. 노드가 멈추면 0으로 떨어지고 백업 노드가 올라갑니다. 표는 "
        "LiteLLM 라우터가 한 일을 셉니다: 폴백 모델 그룹이 처리한 요청(과 원래"
        " 요청한 그룹), 그룹 안의 재시도, LiteLLM 자체에서 쓴 시간(스트리밍이"
        " 아닌 성공 요청만, 느린 프록시가 느린 노드처럼 보이지 않도록). "
        "LiteLLM 1.100 이전의 행은 라우팅을 기록하지 않아 0이 아니라 알 수"
        " 없음으로 셉니다."
    ),
    "serving.routing.unknown": (
        "이 기간의 요청에는 라우팅 기록이 없습니다 (LiteLLM 1.100 이전이거나 라우팅 전에 실패)."
    ),
    "serving.overhead": "노드별 LiteLLM 자체 처리 시간",
    "serving.overhead.help": (
        "LiteLLM이 노드를 기다리는 시간 외에 요청을 붙잡고 있던 시간(인증, "
        "예산, 라우팅, 기록)입니다. LiteLLM은 스트리밍이 아닌 성공 요청만 "
        "잽니다. 잰 요청이 없는 노드는 대시로 표시합니다."
    ),
    "status.title": "ETL 상태",
    "status.no_runs": (
        "ETL이 아직 실행되지 않았습니다. `python -m etl run`을 예약하세요 "
        "(README의 cron 줄이나 deploy/ 참고)."
    ),
    "status.last_failed": "마지막 ETL 실행이 실패했습니다: {error}",
    "status.last_ok": "마지막 성공 실행",
    "status.ago": "{age} 전",
    "status.runs_24h": "실행 횟수 (최근 24시간)",
    "status.failed_n": "{n}회 실패",
    "status.rows_24h": "최근 24시간 실행이 복사한 요청",
    "status.rows_24h.help": (
        "최근 24시간 안에 끝난 실행이 쓴 요청 수로, 요청이 만들어진 시각과는 무관합니다. 첫 실행이나 "
        "전체 새로 고침은 이전 요청도 복사하므로 그 24시간 동안 만들어진 요청 수(아래 노드 표)보다 "
        "클 수 있습니다."
    ),
    "status.noise_24h": "제외한 노이즈 (최근 24시간)",
    "status.noise_help": (
        "LiteLLM 자체 호출: 마스터 키 {master_key}건, 헬스 체크 {health_check}건, 규칙 {rule}건"
    ),
    "status.sources": "소스",
    "status.source": "LiteLLM 데이터베이스",
    "status.no_source": "아직 읽은 데이터베이스 없음 (데모 또는 가져온 행)",
    "status.cursor_column": "커서",
    "status.cursor": "복사 완료 시점",
    "status.newest_request": "최신 요청",
    "status.newest_ingested": "최신 복사",
    "status.refresh_pending": (
        "--full-refresh가 시작된 뒤 끝나지 않았습니다. `python -m etl run --full-refresh`를 다시 실행하세요."
    ),
    "status.nodes": "GPU 노드별 최신 요청",
    "status.node": "노드",
    "status.requests_24h": "요청 (최근 24시간)",
    "status.failures_24h": "실패 (최근 24시간)",
    "status.runs": "최근 실행",
    "status.started": "시작",
    "status.status": "상태",
    "status.run.ok": "성공",
    "status.run.failed": "실패",
    "status.mode": "방식",
    "status.mode.incremental": "증분",
    "status.mode.full_refresh": "전체 새로 고침",
    "status.seconds": "소요 시간",
    "status.rows_read": "읽은 행",
    "status.rows_written": "기록",
    "status.duplicates": "중복 건너뜀",
    "status.dropped_master_key": "마스터 키",
    "status.dropped_health_check": "헬스 체크",
    "status.dropped_by_rule": "규칙",
    "status.malformed": "잘못된 값",
    "status.kept_noise_tagged": "노이즈 태그, 유지됨",
    "status.noise_tagged": (
        "지난 24시간 동안 사용자 키에서 온 요청 {n}건에 노이즈 태그(LiteLLM 헬스 체크 태그 또는 "
        "noise.tags)가 붙어 있었습니다. 태그는 클라이언트가 직접 붙이므로 사용량으로 유지했습니다. "
        "태그 규칙은 noise.tag_keys에 적힌 키에만 적용됩니다."
    ),
    "status.left_out": "각 실행이 제외한 행",
    "status.error": "오류",
    "status.runs_note": "최신순, 최근 실행 최대 {limit}건(etl_runs.parquet), 시간대 {tz}.",
    "adoption.show": "클라이언트별 도입 현황",
    "adoption.help": (
        "기간 내 일, 주, 월별로 각 클라이언트의 활성 사용자(요청이 한 번 이상 있는 사람) "
        "수와 각 사람이 각 클라이언트를 처음 사용한 시각을 보여 줍니다."
    ),
    "adoption.period": "단위",
    "adoption.day": "일",
    "adoption.week": "주 (월요일 시작)",
    "adoption.month": "월",
    "adoption.axis": "활성 사용자",
    "adoption.people": "명",
    "adoption.other": "기타 클라이언트",
    "adoption.first_use": "클라이언트별 첫 사용 (이 기간만이 아닌 저장된 전체 기록)",
    "adoption.col.client": "클라이언트",
    "adoption.col.user": "사용자",
    "adoption.col.first_used": "첫 사용",
    "adoption.col.requests": "이후 요청",
    "digest.subject": "LLM 사용 현황, {start} ~ {end} 주간",
    "digest.head": "한 주 요약: {start} ~ {end} ({zone})",
    "digest.link": "대시보드 열기: {url}",
    "digest.no_link": "자세한 내용은 대시보드에서 확인하세요.",
    "status.digest": "주간 요약",
    "status.digest_waiting": (
        "아직 보내지 못한 요약 {n}건: `python -m dashboard.digest`의 다음 실행에서 다시 "
        "보냅니다. 마지막 오류: {error}"
    ),
    "status.digest_untried": "아직 시도하지 않음",
    "status.digest.week": "주 마지막 날",
    "status.digest.channel": "채널",
    "status.digest.sent": "보낸 시각",
    "status.digest.attempts": "시도",
    "status.digest.last_error": "마지막 오류",
    "page.statements": "월별 명세",
    "statements.title": "월별 사용 명세",
    "statements.intro": (
        "사람, 키, 클라이언트별 요청 수, 종류별 토큰, LiteLLM이 기록한 비용과 API 가격 환산 비용을 "
        "연구실 시간대 기준 월별로 보여 줍니다. 마감된 달의 명세는 한 번 기록되면 바뀌지 않으며, "
        "마감 후에 들어온 그 달의 요청은 다음에 마감하는 달에 조정 항목으로 표시됩니다."
    ),
    "statements.month": "월",
    "statements.closed_label": "{month} (마감)",
    "statements.open_label": "{month} (미마감, 초안)",
    "statements.closed": "{month}은(는) 마감되었습니다. {when} 기준의 수치이며 바뀌지 않습니다.",
    "statements.open": (
        "{month}은(는) 아직 마감되지 않았습니다. 현재 데이터로 만든 초안이며 마감 전까지 바뀔 수 있습니다."
    ),
    "statements.open_admin": (
        "{month}은(는) 아직 마감되지 않았습니다. 현재 데이터로 만든 초안입니다. 달이 끝나면 `python "
        "-m etl close-month {month}`로 마감하세요. 마감된 명세는 바뀌지 않습니다."
    ),
    "statements.empty": "{month}에는 요청이 없습니다.",
    "statements.lines": "명세 항목",
    "statements.adjustments": "조정 항목",
    "statements.adjustments_help": (
        "이미 마감된 이전 달의 요청 중 마감 후에 들어온 것입니다. 그 달의 명세에 더하지 않고 여기에 "
        "표시합니다."
    ),
    "statements.all_months": "전체 월",
    "statements.requests": "요청",
    "statements.tokens": "토큰",
    "statements.spend": "비용 (LiteLLM)",
    "statements.api_cost": "API 가격 환산",
    "statements.api_cost_help": (
        "각 요청 날짜에 유효한 가격표 가격으로 계산합니다. 가격이 없는 모델의 요청은 제외됩니다."
    ),
    "statements.not_priced": "가격 없음",
    "statements.status_closed": "마감",
    "statements.status_open": "미마감",
    "statements.csv": "CSV 내려받기",
    "statements.printable": "인쇄용 페이지 내려받기",
    "statements.printable_help": "A4에 맞춘 HTML 페이지입니다. 브라우저에서 열어 인쇄하세요.",
    "statements.doc_title": "사용 명세 {month}",
    "statements.doc_closed": "마감됨: 이 수치는 바뀌지 않습니다.",
    "statements.doc_draft": "초안: 아직 마감되지 않아 수치가 바뀔 수 있습니다.",
    "statements.col.of_month": "해당 월",
    "statements.col.user": "사용자",
    "statements.col.key_alias": "키",
    "statements.col.key_name": "키 (LiteLLM 표시)",
    "statements.col.team_id": "팀",
    "statements.col.client": "클라이언트",
    "statements.col.requests": "요청",
    "statements.col.prompt_uncached_tokens": "프롬프트 (캐시 미적중)",
    "statements.col.prompt_cached_tokens": "프롬프트 (캐시 적중)",
    "statements.col.completion_tokens": "응답",
    "statements.col.reasoning_tokens": "그중 추론",
    "statements.col.spend_usd": "비용",
    "statements.col.api_cost_usd": "API 가격 환산",
    "statements.col.budget_used": "키 예산 대비",
    "statements.col.budget_used.help": (
        "이번 달 비용을 현재 LiteLLM의 키 예산 대비 비율로 보여 줍니다. 한 달 안에 "
        "초기화되는 예산(30일, 1주)은 100 %를 넘을 수 있습니다."
    ),
    "statements.total": "합계",
    "statements.col.month": "월",
    "statements.col.status": "상태",
    "statements.col.closed_at": "마감 시각",
    "statements.col.adjustment_requests": "조정된 늦은 요청",
}
