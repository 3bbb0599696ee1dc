/* hunt_rules_supply.c — supply_chain: the recording holds security events (JAGER_LOCK,
 * docs/supply-chain.md): the code that ran is not the code that was locked, so every other
 * finding is about unknown code. One finding, ranked first, listing what differs. */
#include <stdio.h>

#include "hunt_priv.h"

void hunt_rule_supply_chain(const jm_model *m, hunt_list *l)
{
    if (!m->security_events) return;
    hunt_finding *f = hunt_add(l, HUNT_SUPPLY_CHAIN, 2, -1, m);
    if (!f) return;
    f->title = hunt_fmt(l, "supply chain: %llu security event%s — the code that ran differs from its lock",
                        (unsigned long long)m->security_events, m->security_events == 1 ? "" : "s");
    f->hint = hunt_fmt(l, "run `jager verify LOCK` to see every difference; re-lock (`jager lock`) only if the change "
                          "is intended, and distrust these measurements until then (JAGER_STRICT=1 refuses to record)");
    f->estimate = "not a cost: ranked first whatever the others cost";
    hunt_ev(f, "security_events", (double)m->security_events, "count");
    for (uint32_t i = 0; i < m->nsecurity && f->ndetails < HUNT_MAX_DETAILS; i++) {
        const jm_security *s = &m->security[i];
        if (f->ndetails == HUNT_MAX_DETAILS - 1 && m->security_events > HUNT_MAX_DETAILS) {
            hunt_detail(l, f, "… and %llu more", (unsigned long long)(m->security_events - f->ndetails));
            break;
        }
        hunt_detail(l, f, "%s", s->body);
    }
}
