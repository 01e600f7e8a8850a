"""Why no policy rule approved a call: what a reviewer is shown beside the pending call.

A rule approves a call only when it names the call's tool (and version), every
condition on the arguments holds, and the facts the fence verified state the call
(:meth:`~assay.tool_bus.Grants.policy_problems`). When none did, each rule that names
the tool says which of these failed, in the policy's order; a policy with no rule for
the tool says so. The lines travel with the pending call (``PendingGrant.policy``, the
review request's ``policy``), so ``RunResult``, ``assay audit`` and ``/ui`` show the
same reasons.
"""

from __future__ import annotations

from assay.tool_bus import GrantRequest, Grants

__all__ = ["policy_reasons"]

#: The most problems one rule lists (the first ones found).
_MAX_PROBLEMS = 5


def policy_reasons(grants: Grants, run_id: str, request: GrantRequest) -> list[str]:
    """One line per rule naming the call's tool, saying why it did not approve it."""
    rules = [rule for rule in grants.policy.rules if rule.tool == request.tool]
    if not rules:
        held = len(grants.policy.rules)
        return [f"no policy rule names {request.tool} (the policy holds {held} rule(s))"]
    reasons: list[str] = []
    for rule in rules:
        why = rule.unmet(request.tool, request.version, request.args)
        if not why:
            why = grants.policy_problems(run_id, request, rule)
        if not why:
            why = ["it applies, but its grant could not be issued (see the ledger's errors)"]
        shown = why[:_MAX_PROBLEMS]
        more = f" (and {len(why) - len(shown)} more)" if len(why) > len(shown) else ""
        reasons.append(f"rule {rule.name}: {'; '.join(shown)}{more}")
    return reasons
