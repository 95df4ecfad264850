"""What the transform recognises, and the names it gives: LiteLLM's marks of its own
traffic (the health check, the master key), the client and node rules (`Rules`,
`host_port`, the default client rules), and LiteLLM's rate-limit refusals as the store
names them. One value at a time: no Arrow here."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from settings.config import ClientRule, Config, NodeRule, NoiseRules

HEALTH_CHECK = "litellm-internal-health-check"
HEALTH_CHECK_SHA256 = "2ee659761968def976c7905217d96fa6e765f300dfb066f6c73fd3c279b3435a"
MASTER_KEY_LITERAL = "litellm_proxy_master_key"
MASTER_KEY_USER = "default_user_id"
USER_AGENT_TAG = "User-Agent: "
UNKNOWN = "unknown"

# First match wins; case-insensitive substring of the user agent.
DEFAULT_CLIENT_RULES: tuple[ClientRule, ...] = (
    ClientRule("OpenCode", ("opencode",)),
    ClientRule("Hermes", ("hermes",)),
    ClientRule("Claude Code", ("claude-cli", "claude-code")),
    ClientRule("Cline", ("cline",)),
    ClientRule("Roo Code", ("roo-code", "roocode")),
    ClientRule("aider", ("aider",)),
    ClientRule("Continue", ("continue",)),
    ClientRule("Open WebUI", ("open-webui",)),
    ClientRule("LiteLLM SDK", ("litellm",)),
    ClientRule("OpenAI Python SDK", ("openai/python",)),
    ClientRule("OpenAI JS SDK", ("openai/js",)),
    ClientRule("curl", ("curl/",)),
    ClientRule("Python HTTP", ("python-requests", "python-httpx", "aiohttp")),
)

NOISE_REASONS = ("health_check", "master_key", "rule")

# LiteLLM's own rate-limit refusals: ProxyRateLimitError (1.106 on; also the opt-in session
# budget and iteration caps, told apart by their kind), a 429 HTTPException before it.
# The kind as the row names it (error_rate_limit_type, else the limiter's "Limit type: ...")
# and as the store does; a refusal of another kind, or none, is stored as `unknown`.
RATE_LIMIT_CLASS = "ProxyRateLimitError"
RATE_LIMIT_KINDS = {
    "tokens": "tpm",
    "requests": "rpm",
    "concurrent_requests": "parallel",
    "max_parallel_requests": "parallel",
    "budget": None,  # a session's budget, not a rate
    "max_iterations": None,
}
# Whose limit it was: the limiter's descriptor keys (parallel_request_limiter_v3)
RATE_LIMIT_SCOPES = frozenset(
    {
        "api_key", "user", "team", "team_member", "end_user", "organization", "project",
        "model_per_key", "model_per_team", "model_per_organization", "model_per_project",
        "model_per_project_itpm", "model_per_project_otpm", "tag", "tag_per_key",
        "agent", "agent_session", "mcp_per_key", "mcp_per_team", "mcp_server",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Rules:
    """Everything the transform needs from the configuration."""

    noise: NoiseRules = field(default_factory=NoiseRules)
    nodes: tuple[NodeRule, ...] = ()
    clients: tuple[ClientRule, ...] = ()

    @classmethod
    def from_config(cls, config: Config) -> Rules:
        return cls(noise=config.noise, nodes=config.nodes, clients=config.clients)

    def client_for(self, user_agent: str | None) -> str:
        if not user_agent or not user_agent.strip():
            return UNKNOWN
        lowered = user_agent.lower()
        for rule in self.clients + DEFAULT_CLIENT_RULES:
            if any(needle in lowered for needle in rule.contains):
                return rule.name
        product = user_agent.strip().split("/", 1)[0].strip()
        return product[:64] or UNKNOWN

    def node_for(self, api_base: str | None, model_id: str | None) -> str:
        address = host_port(api_base) if api_base else None
        if address is not None:
            for rule in self.nodes:
                if any(host_port(b) == address for b in rule.api_bases):
                    return rule.name
        if model_id:
            for rule in self.nodes:
                if model_id in rule.model_ids:
                    return rule.name
        return address or UNKNOWN


def host_port(url: str) -> str | None:
    """`host:port` as written (`host` alone when there is no port); None for no host
    or for text that is not a URL at all.

    One node's api_base comes as http://h:8000/v1, .../v1/ or .../v1/chat/completions:
    matching on host and port, not on the whole URL, makes them one node.
    """
    text = url.strip()
    if not text:
        return None
    try:
        parts = urlsplit(text if "://" in text else "//" + text)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:  # "http://[10.0.0.5:8000/v1", a port of "80a", ...
        return None
    if not host:
        return None
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    return f"{host}:{port}" if port is not None else host


def _rate_limit_kind(named: str | None) -> str:
    """The store's name for a refusal's kind; "" for a refusal that is no rate limit."""
    if not named:
        return UNKNOWN
    return RATE_LIMIT_KINDS.get(named, UNKNOWN) or ""
