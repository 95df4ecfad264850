"""What the dashboard writes itself (sign-in sessions, the sign-in gate's budgets), in a
small database of its own that its processes share. The store stays read-only."""
