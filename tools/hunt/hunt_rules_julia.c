/* hunt_rules_julia.c — rules on the Julia dispatch telemetry (dispatch.* events): type
 * instability, dispatch diversity, specialization explosion, compile time. Thresholds and
 * reasoning: docs/hunt.md. */
#include <stdlib.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "hunt_priv.h"

#define DIVERSITY_MIN_SIGNATURES 4  /* Julia union-splits up to 4 types (max_methods); beyond, dispatch is dynamic */
#define SPECS_MIN_COUNT 16          /* specializations of one method */
#define COMPILE_MIN_SHARE 0.10      /* ≥ 10% of the run compiling */
#define FLAG_RUNTIME_DISPATCH 1     /* verdict: a call the optimizer left dynamic */
#define FLAG_BOX 4                  /* verdict: a captured variable in a Core.Box */
#define FLAG_ONCE_PER_CALL 16       /* verdict: the statement is outside every loop of the site's method */
#define DYNAMIC_CALL_NS 100.0       /* one dynamic call on Julia 1.5 (measured 62–108 ns, docs/hunt.md): the
                                       price when the file has no julia.dynamic_call_ns (older bindings) */
#define RUNS_SHIFT 32               /* flags bits 32–63: runs per call of the offending statements (0: unknown) */
#define FLAG_BITS 0xffffffffull

/* ---- signature strings: "Tuple{typeof(f), Float64, Vector{Int64}}" ---- */

/* The \p k-th top-level parameter of a Tuple{...} signature into buf; 0 if absent. */
static int sig_param(const char *sig, uint32_t k, char *buf, size_t size)
{
    const char *p = strchr(sig, '{');
    if (!p) return 0;
    p++;
    uint32_t idx = 0;
    int depth = 0;
    const char *start = p;
    for (; *p; p++) {
        char c = *p;
        if (c == '{' || c == '(' || c == '[') depth++;
        else if ((c == '}' || c == ')' || c == ']') && depth > 0) depth--;
        else if ((c == ',' || c == '}') && depth == 0) {
            if (idx == k) {
                while (*start == ' ') start++;
                size_t n = (size_t)(p - start);
                if (n >= size) n = size - 1;
                memcpy(buf, start, n);
                buf[n] = 0;
                return 1;
            }
            idx++;
            start = p + 1;
            if (c == '}') return 0;
        }
    }
    return 0;
}

/* "Float32 and Float64": the distinct values of the first parameter where the site's
 * signatures differ. \return the number of distinct values (0: no difference found). */
static uint32_t sig_difference(const jm_model *m, const jm_site *s, char *out, size_t size)
{
    out[0] = 0;
    if (s->sig_count < 2) return 0;
    const jm_signature *g = &m->signatures[s->sig_first];
    for (uint32_t k = 1; k < 32; k++) {
        char first[128];
        if (!sig_param(g[0].signature, k, first, sizeof first)) return 0;
        char seen[4][128];
        uint32_t nseen = 0, differs = 0;
        for (uint32_t i = 0; i < s->sig_count; i++) {
            char v[128];
            if (!sig_param(g[i].signature, k, v, sizeof v)) continue;
            if (strcmp(v, first)) differs = 1;
            uint32_t j = 0;
            while (j < nseen && strcmp(seen[j], v)) j++;
            if (j == nseen && nseen < 4) memcpy(seen[nseen++], v, sizeof v);
        }
        if (!differs) continue;
        size_t o = 0;
        for (uint32_t j = 0; j < nseen && o < size; j++) {
            const char *sep = j == 0 ? "" : j + 1 == nseen && s->sig_count <= 4 ? " and " : ", ";
            int w = snprintf(out + o, size - o, "%s%s", sep, seen[j]);
            if (w > 0) o += (size_t)w;
        }
        if (s->sig_count > 4 && o < size) snprintf(out + o, size - o, " …");
        return nseen;
    }
    return 0;
}

/* An abstract type reaching a call ("::Real", "::AbstractFloat", "::Any", …). */
static int abstract_arg(const char *reason)
{
    static const char *const abstract[] = {"::Real", "::AbstractFloat", "::Number", "::Integer", "::Signed",
                                           "::Unsigned", "::Any", "::Abstract", "::Union{"};
    for (size_t i = 0; reason && i < sizeof abstract / sizeof abstract[0]; i++) {
        const char *p = strstr(reason, abstract[i]);
        /* "::Real" but not "::RealLike"; "::Abstract…" is a prefix on purpose. */
        if (p && ((abstract[i][2] == 'A' && abstract[i][3] == 'b') || !isalnum((unsigned char)p[strlen(abstract[i])])))
            return 1;
    }
    return 0;
}

/* The fix that matches an instability's kind. */
static const char *instability_fix(uint64_t flags, const char *reason, const char **hint)
{
    int field_access = reason && strstr(reason, "::") && strchr(reason, '.') && strchr(reason, '.') < strstr(reason, "::");
    if (flags & 4) {
        *hint = "A variable captured by a closure is reassigned, so Julia boxes it (Core.Box) and every use is "
                "dynamic: don't reassign captured variables, or bind them with `let x = x ... end`.";
        return "avoid reassigning the captured variable";
    }
    if (reason && strstr(reason, "non-constant global")) {
        *hint = "A non-constant global has no known type, so every use is dispatched at runtime: declare it "
                "`const` (its value may still change if its type does not) or pass it as an argument.";
        return "make the global const or pass it as an argument";
    }
    if ((flags & 1) && (field_access || abstract_arg(reason))) {
        *hint = "A value of abstract type reaches this call, so it is dispatched at runtime on every iteration. It "
                "usually comes from a struct field or container declared abstract (`weight::Real`, "
                "`Vector{Real}`): make the field concrete or parametrise the struct "
                "(`struct P{T<:Real}; weight::T; end`), converting values once where they are loaded.";
        return "make the field concrete";
    }
    if (flags & 2) {
        *hint = "A variable changes type inside the loop (e.g. an accumulator initialised with `0` then given "
                "Float64 values): initialise it with the type it will hold (`zero(eltype(x))`, `0.0`).";
        return "give the variable one type from the start";
    }
    if (flags & 1) {
        *hint = "Calls whose argument types cannot be inferred are resolved at runtime on every call: make the "
                "types inferable (concrete containers and fields, no type-changing variables) or move the hot "
                "loop behind a function barrier that receives concretely typed arguments.";
        return "make the argument types inferable";
    }
    *hint = "The return type depends on runtime values: make it depend only on argument types (return the same "
            "type on every branch), so callers can be compiled for it.";
    return "make the return type depend only on argument types";
}

/* The site of the function a dispatch reason names ("runtime dispatch: `scatter!(…)`"). */
static const jm_site *callee_site(const jm_model *m, const char *reason)
{
    const char *p = reason ? strchr(reason, '`') : NULL;
    if (!p) return NULL;
    p++;
    size_t n = strcspn(p, "(`");
    if (!n || p[n] != '(') return NULL;
    for (uint32_t id = 1; id < m->nsites; id++)
        if (m->sites[id].sig_count > 1 && strlen(m->sites[id].name) == n && !strncmp(m->sites[id].name, p, n))
            return &m->sites[id];
    return NULL;
}

/* ---- type_instability: one finding per problem ---- */

/* The problem an instability names: the innermost method of its chain (where the
 * statement sits) and the statement's location ("… at file.jl:42"). Two sites calling the
 * same unstable method report the same problem; so do two signatures of one method whose
 * dispatch sits on the same line. Written as "method@location" (or "method@reason"). */
static void problem_key(const jm_instability *u, char *out, size_t size)
{
    const char *chain = u->chain ? u->chain : "";
    const char *last = chain, *p;
    while ((p = strstr(last, " → ")) != NULL) last = p + strlen(" → ");
    size_t n = strcspn(last, "( ");
    const char *reason = u->reason ? u->reason : "";
    const char *at = NULL;
    for (p = reason; (p = strstr(p, " at ")) != NULL; p += 4) at = p + 4;
    snprintf(out, size, "%.*s@%s", (int)n, last, at ? at : reason);
}

typedef struct unstable_ref {
    uint32_t index;   /* into m->instabilities */
    uint32_t group;   /* problem number */
    char key[256];
} unstable_ref;

static int by_key(const void *a, const void *b)
{
    const unstable_ref *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->index < y->index ? -1 : x->index > y->index);
}

/* 1 if site \p inner ran inside a span of another site of \p in (the merged tree). */
static int nested_in_group(const jm_model *m, jager_site inner, const uint8_t *in)
{
    const jm_tree *t = &m->merged;
    for (uint32_t i = 1; i < t->count; i++) {
        if (t->nodes[i].site != inner) continue;
        for (uint32_t p = t->nodes[i].parent, hops = 0; p != JM_NONE && p != 0 && hops < 4096; p = t->nodes[p].parent, hops++) {
            uint32_t outer = t->nodes[p].site;
            if (outer < m->nsites && outer != inner && in[outer]) return 1;
        }
    }
    return 0;
}

/* 1 if a method of \p chain below its root ("f(…) → g(…) at x.jl:3 → h(…)") is the
 * function of some site: the dispatch may then run inside that site's spans too. */
static int chain_enters_site(const jm_model *m, const char *chain)
{
    const char *p = chain ? strstr(chain, " → ") : NULL;
    while (p) {
        p += strlen(" → ");
        size_t n = strcspn(p, "( ");
        for (uint32_t id = 1; id < m->nsites && n; id++) {
            const char *name = m->sites[id].name;
            size_t k = strlen(name);
            /* "advance" or "NBody.advance" */
            if (k >= n && !strncmp(name + k - n, p, n) && (k == n || name[k - n - 1] == '.')) return 1;
        }
        p = strstr(p, " → ");
    }
    return 0;
}

/* The site that \p hop ("g(…) at x.jl:3 → …", a call in \p outer's method) calls, when g is
 * the function of a site that ran inside \p outer's spans: the hop is that inner site's
 * call (a phase calling `@jäger kernel(…)`), so the dispatch runs in the inner site's
 * time, not in the rest of the phase. 0 when there is none. */
static jager_site inner_site_of_hop(const jm_model *m, jager_site outer, const char *hop)
{
    size_t n = strcspn(hop, "( ");
    const jm_tree *t = &m->merged;
    for (uint32_t i = 1; i < t->count && n; i++) {
        const jm_node *nd = &t->nodes[i];
        if (nd->site == outer || nd->site >= m->nsites || nd->parent == JM_NONE || t->nodes[nd->parent].site != outer)
            continue;
        const char *name = m->sites[nd->site].name;
        size_t k = strlen(name);
        /* "perf_ziggurat" or "PB.Ziggurat.perf_ziggurat" */
        if (k >= n && !strncmp(name + k - n, hop, n) && (k == n || name[k - n - 1] == '.')) return nd->site;
    }
    return 0;
}

/* The innermost site on \p u's chain: from the verdict's site, down every hop that is the
 * call of a site nested in the previous one. \p rest: the chain from that site's method. */
static jager_site innermost_site(const jm_model *m, const jm_instability *u, const char **rest)
{
    jager_site site = u->site;
    *rest = u->chain;
    for (const char *p = u->chain ? strstr(u->chain, " → ") : NULL; p; p = strstr(p, " → ")) {
        p += strlen(" → ");
        jager_site inner = inner_site_of_hop(m, site, p);
        if (!inner) break;
        site = inner;
        *rest = p;
    }
    return site;
}

/* The calls of the verdict's signature at its site (the census's exact count), or the
 * site's calls when the signature is its only one; 0 when unknown. */
static uint64_t verdict_calls(const jm_model *m, const jm_instability *u)
{
    const jm_site *s = jm_site_get(m, u->site);
    if (!s) return 0;
    for (uint32_t i = 0; i < s->sig_count; i++) {
        const jm_signature *g = &m->signatures[s->sig_first + i];
        if (g->calls && u->signature && g->signature && !strcmp(g->signature, u->signature)) return g->calls;
    }
    return s->sig_count <= 1 ? s->calls : 0;
}

/* The dynamic calls the problem made: Σ over its verdicts of runs per call (what the IR
 * fixes: 1 outside loops, a literal loop's trip count) × the signature's calls. 0 when
 * any verdict's count is unknown (a loop bound known only at run time, a callee). */
static double problem_dispatches(const jm_model *m, const unstable_ref *refs, uint32_t n)
{
    double total = 0;
    for (uint32_t i = 0; i < n; i++) {
        const jm_instability *u = &m->instabilities[refs[i].index];
        uint64_t runs = u->flags >> RUNS_SHIFT;
        if (!runs && (u->flags & FLAG_ONCE_PER_CALL)) runs = 1; /* bindings before the count */
        uint64_t calls = verdict_calls(m, u);
        if (!runs || !calls) return 0;
        total += (double)runs * (double)calls;
    }
    return total;
}

/* One finding for the instabilities refs[0..n) (one problem, possibly several sites). */
static void instability_problem(const jm_model *m, hunt_list *l, const unstable_ref *refs, uint32_t n, uint8_t *in)
{
    const jm_instability *lead = &m->instabilities[refs[0].index];
    uint64_t flags = 0;
    int once = 1; /* every verdict says the statement runs once per call */
    for (uint32_t i = 0; i < n; i++) {
        const jm_instability *u = &m->instabilities[refs[i].index];
        flags |= u->flags & FLAG_BITS;
        once &= (u->flags & FLAG_ONCE_PER_CALL) != 0;
        if (!*lead->reason && *u->reason) lead = u;
    }
    /* The sites whose code reaches the problem, each counted once. A phase whose verdict
     * reaches the problem only through a site inside it (its chain's first hop is that
     * site's call) is represented by the inner site: charging the phase would charge every
     * other kernel it runs (a union in Ziggurat's loop was 61 % of a run, the whole phase
     * of eight kernels, when the Ziggurat kernel took 0.3 %). */
    jager_site sites[16];
    uint32_t nsites = 0;
    const char *rest[64];
    for (uint32_t i = 0; i < n; i++) {
        const char *r;
        jager_site site = innermost_site(m, &m->instabilities[refs[i].index], &r);
        if (i < 64) rest[i] = r;
        uint32_t k = 0;
        while (k < nsites && sites[k] != site) k++;
        if (k == nsites && nsites < 16) sites[nsites++] = site;
    }
    for (uint32_t k = 0; k < nsites; k++)
        if (sites[k] < m->nsites) in[sites[k]] = 1;
    /* Cost: the time of the instrumented regions where the dispatch runs, summed over the
     * sites (a site inside another of the same problem is not counted twice). When the
     * statement sits in the site's own method (the chain is that method alone), the time
     * of the sites inside it is other methods' — separately instrumented kernels — and is
     * left out: the region's self time is the bound. */
    int own = 1, enters = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *chain = i < 64 ? rest[i] : m->instabilities[refs[i].index].chain;
        own &= !chain || !strstr(chain, " → ");
        enters |= chain_enters_site(m, chain);
    }
    /* A callee that is no site's function runs in the site's own time too: the sites
     * inside are other methods (nbody: init_sun's instability is not in `advance`). */
    int self_bound = own || !enters;
    double cost = 0;
    const jm_site *heaviest = NULL;
    for (uint32_t k = 0; k < nsites; k++) {
        const jm_site *s = jm_site_get(m, sites[k]);
        if (!s) continue;
        double t = hunt_site_time(s);
        if (self_bound && s->ev_total_ns && s->self_ns <= s->ev_total_ns)
            t = (double)s->self_ns * ((double)s->total_ns / (double)s->ev_total_ns);
        if (!heaviest || hunt_site_time(s) > hunt_site_time(heaviest)) heaviest = s;
        /* Self times never overlap; inclusive ones do when one site runs inside another. */
        if (t > 0 && (self_bound || !(nsites > 1 && nested_in_group(m, sites[k], in)))) cost += t;
    }
    for (uint32_t k = 0; k < nsites; k++)
        if (sites[k] < m->nsites) in[sites[k]] = 0;
    uint64_t calls = 0;
    for (uint32_t k = 0; k < nsites; k++) {
        const jm_site *s = jm_site_get(m, sites[k]);
        if (s) calls += s->calls;
    }
    /* What the problem itself costs: the dynamic calls it made (when the IR fixes how often
     * its statements run) times one dynamic call's price as timed in this run, when that is
     * less than the smallest region holding it. */
    double region = cost;
    double dispatches = problem_dispatches(m, refs, n);
    int measured = m->julia_dynamic_call_ns > 0;
    double price = measured ? m->julia_dynamic_call_ns : DYNAMIC_CALL_NS;
    int by_count = dispatches > 0 && (region <= 0 || dispatches * price < region);
    if (by_count) cost = dispatches * price;
    /* A union the compiler splits (flag 2 without a dynamic call or a box): typed branches
     * of static calls, no dispatch — as JET's runtime-dispatch analysis, no problem. A note
     * with no cost: its region's time is not its cost (Ziggurat's `sign` union, 2.5 % of a
     * run as a region bound, measured 6.70 against 6.85 ms with the variable typed). */
    int split = !(flags & (FLAG_RUNTIME_DISPATCH | FLAG_BOX));
    if (split) by_count = 0, dispatches = 0, cost = -1;
    if (cost <= 0) cost = -1;
    hunt_finding *f = hunt_add(l, HUNT_TYPE_INSTABILITY, split ? 0 : 2, cost, m);
    if (!f) return;
    if (heaviest) hunt_at_site(f, m, heaviest->id);
    f->estimate = split ? "none: a union the compiler splits into typed branches makes no dynamic call (a note)"
                : by_count && measured
                      ? hunt_fmt(l, "%.0f dynamic calls (%s × calls) × %.1f ns, one dynamic call as timed in this run",
                                 dispatches, once ? "once per call: the statement is outside every loop"
                                                  : "runs per call from the code's loop bounds", price)
                  : by_count ? hunt_fmt(l, "%.0f dynamic calls (%s × calls) × 100 ns, the documented price of one dynamic "
                                           "call on Julia 1.5 (this recording has no measured julia.dynamic_call_ns)",
                                        dispatches, once ? "once per call: the statement is outside every loop"
                                                         : "runs per call from the code's loop bounds")
                  : self_bound && nsites > 1 ? "the summed self time (less the sites inside, none of which the dispatch's call chain enters) of the instrumented regions that reach the dispatch (an upper bound)"
                  : self_bound ? "the self time (less the sites inside, none of which the dispatch's call chain enters) of the instrumented region that reaches the dispatch (an upper bound)"
                  : nsites > 1 ? "the summed time of the instrumented regions whose code reaches the dispatch (an upper bound)"
                             : "the time of the instrumented region whose code reaches the dispatch (an upper bound)";
    const char *hint = NULL;
    const char *fix = instability_fix(flags, lead->reason, &hint);
    if (split) {
        hint = "Julia splits this small union into one typed branch per member, with static calls in each: no "
               "dynamic dispatch, and usually no measurable cost. Give the variable one type from the start only "
               "if the branch sits in a tight loop that should vectorise.";
        fix = "a split union, no dynamic call (a note)";
    }
    char seen[300] = "", share[96] = "", reason[300], where[160] = "";
    jm_text_fit(reason, sizeof reason, *lead->reason ? lead->reason : "unstable signature", 160);
    /* The types seen where the signatures differ: at a site, or at the callee the runtime
     * dispatch goes to (pic.jl: deposit! calls scatter! with Float32 and Float64). */
    const jm_site *callee = callee_site(m, lead->reason);
    if ((heaviest && sig_difference(m, heaviest, seen, sizeof seen) > 1) ||
        (callee && sig_difference(m, callee, seen, sizeof seen) > 1)) {
        size_t k = strlen(seen);
        snprintf(seen + k, sizeof seen - k, " seen");
    }
    if (cost > 0) snprintf(share, sizeof share, "%.1f%% of the run", f->pct_of_run);
    if (nsites > 1) snprintf(where, sizeof where, " (reached from %u sites)", nsites);
    f->title = hunt_fmt(l, "type instability in `%s`%s: %s%s%s%s%s — %s", heaviest ? heaviest->name : "(uninstrumented code)",
                        where, reason, *share ? ", " : "", share, *seen ? ", " : "", seen, fix);
    f->hint = hunt_fmt(l, "%s", hint);
    hunt_ev(f, "flags", (double)flags, "");
    hunt_ev(f, "unstable_signatures", (double)n, "count");
    hunt_ev(f, "sites", (double)nsites, "count");
    if (heaviest) {
        hunt_ev(f, "calls", (double)calls, "count");
        hunt_ev(f, "region_ns", region, "ns");
        if (dispatches > 0) {
            hunt_ev(f, "dispatches", dispatches, "count");
            hunt_ev(f, "dynamic_call_ns", price, "ns");
            hunt_ev(f, "dynamic_call_measured", measured, "");
        }
        hunt_ev(f, "estimated_cost_ns", cost, "ns");
        hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
        hunt_ev(f, "signatures", (double)heaviest->sig_count, "count");
    }
    for (uint32_t k = 0; k < nsites && nsites > 1; k++) {
        const jm_site *s = jm_site_get(m, sites[k]);
        char c[32];
        if (s) hunt_detail(l, f, "site `%s` (%s:%u): %s", s->name, s->file, s->line, hunt_ns(c, sizeof c, hunt_site_time(s)));
    }
    for (uint32_t i = 0; i < n && i < 3; i++) {
        const jm_instability *u = &m->instabilities[refs[i].index];
        if (*u->chain) hunt_detail(l, f, "call chain: %s", u->chain);
        hunt_detail(l, f, "unstable signature: %s%s%s", u->signature, *u->reason ? " — " : "", u->reason);
    }
    for (uint32_t i = 0; heaviest && i < heaviest->sig_count && f->ndetails < HUNT_MAX_DETAILS; i++)
        hunt_detail(l, f, "seen: %s ×%llu", m->signatures[heaviest->sig_first + i].signature,
                    (unsigned long long)m->signatures[heaviest->sig_first + i].calls);
}

void hunt_rule_type_instability(const jm_model *m, hunt_list *l)
{
    if (!m->ninstabilities) return;
    unstable_ref *refs = calloc(m->ninstabilities, sizeof *refs);
    uint8_t *in = calloc(m->nsites ? m->nsites : 1, 1);
    if (!refs || !in) {
        free(refs);
        free(in);
        l->oom = 1;
        return;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->ninstabilities; i++) {
        if (!m->instabilities[i].flags) continue;
        refs[n].index = i;
        problem_key(&m->instabilities[i], refs[n].key, sizeof refs[n].key);
        n++;
    }
    if (n > 1) qsort(refs, n, sizeof *refs, by_key);
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i;
        while (j < n && !strcmp(refs[j].key, refs[i].key)) j++;
        instability_problem(m, l, &refs[i], j - i, in);
        i = j;
    }
    free(refs);
    free(in);
}

void hunt_rule_dispatch_diversity(const jm_model *m, hunt_list *l)
{
    for (uint32_t id = 1; id < m->nsites; id++) {
        const jm_site *s = &m->sites[id];
        if (s->sig_count < DIVERSITY_MIN_SIGNATURES) continue;
        const jm_signature *g = &m->signatures[s->sig_first];
        uint64_t total = 0;
        for (uint32_t i = 0; i < s->sig_count; i++) total += g[i].calls;
        /* Calls that did not take the dominant signature pay for the variety. */
        double other = total ? 1.0 - (double)g[0].calls / (double)total : 1.0 - 1.0 / s->sig_count;
        double t = hunt_site_time(s);
        double cost = t > 0 ? t * other : -1;
        hunt_finding *f = hunt_add(l, HUNT_DISPATCH_DIVERSITY, 1, cost, m);
        if (!f) return;
        hunt_at_site(f, m, id);
        char seen[300];
        sig_difference(m, s, seen, sizeof seen);
        f->title = hunt_fmt(l, "dispatch diversity in `%s`: called with %u argument signatures%s%s%s", s->name,
                            s->sig_count, *seen ? " (" : "", seen, *seen ? ")" : "");
        f->hint = hunt_fmt(l, "Each signature compiles its own specialization, and callers that see more than a few "
                              "types dispatch at runtime: convert inputs to one type where they enter (`float(x)`, "
                              "`convert(T, x)`), or mark arguments `@nospecialize` when the work does not depend on "
                              "their type.");
        hunt_ev(f, "signatures", (double)s->sig_count, "count");
        hunt_ev(f, "calls", (double)total, "count");
        hunt_ev(f, "dominant_share_pct", total ? 100.0 * (double)g[0].calls / (double)total : 0, "%");
        if (t > 0) hunt_ev(f, "region_ns", t, "ns");
        for (uint32_t i = 0; i < s->sig_count && f->ndetails < HUNT_MAX_DETAILS; i++)
            hunt_detail(l, f, "%s ×%llu", g[i].signature, (unsigned long long)g[i].calls);
    }
}

/* "f(x::Val) in Main at file:line" → "f"; module "Main". */
static void method_name(const char *method, char *name, size_t size, char *module, size_t msize)
{
    size_t n = strcspn(method, "(");
    if (n >= size) n = size - 1;
    memcpy(name, method, n);
    name[n] = 0;
    module[0] = 0;
    const char *in = strstr(method, ") in ");
    if (in) {
        in += 5;
        size_t k = strcspn(in, " ");
        if (k >= msize) k = msize - 1;
        memcpy(module, in, k);
        module[k] = 0;
    }
}

/* Compile time spent on signatures of function \p name ("typeof(name)" or "typeof(Mod.name)"). */
static double compile_ns_of(const jm_model *m, const char *name, uint64_t *count)
{
    char a[160], b[160];
    snprintf(a, sizeof a, "typeof(%s)", name);
    snprintf(b, sizeof b, ".%s)", name);
    double ns = 0;
    *count = 0;
    for (uint32_t i = 0; i < m->ncompiles; i++) {
        const char *sig = m->compiles[i].signature;
        const char *t = strstr(sig, "typeof(");
        if (!t) continue;
        const char *close = strchr(t, ')');
        if (!strncmp(t, a, strlen(a)) || (close && (size_t)(close - t) >= strlen(b) && !strncmp(close + 1 - strlen(b), b, strlen(b)))) {
            ns += (double)(m->compiles[i].codegen_ns + m->compiles[i].inference_ns);
            *count += m->compiles[i].count;
        }
    }
    return ns;
}

void hunt_rule_specializations(const jm_model *m, hunt_list *l)
{
    for (uint32_t i = 0; i < m->nmethods; i++) {
        const jm_method_specs *ms = &m->methods[i];
        if (ms->count < SPECS_MIN_COUNT) continue;
        char name[128], module[64];
        method_name(ms->method, name, sizeof name, module, sizeof module);
        /* Base and Core specialise for every program; only the program's own methods are actionable. */
        if (!strcmp(module, "Base") || !strcmp(module, "Core") || !strncmp(module, "Base.", 5)) continue;
        uint64_t ncomp = 0;
        double cns = compile_ns_of(m, name, &ncomp);
        hunt_finding *f = hunt_add(l, HUNT_SPECIALIZATION_EXPLOSION, 2, cns > 0 ? cns : -1, m);
        if (!f) return;
        f->owned_func = hunt_fmt(l, "%s", name);
        f->estimate = cns > 0 ? "codegen + inference time of the compile events of this function" : "";
        f->func = f->owned_func ? f->owned_func : "";
        f->file = ms->file;
        f->line = ms->line;
        char c[32];
        if (cns > 0)
            f->title = hunt_fmt(l, "specialization explosion in `%s`: %llu specializations compiled, %s compiling them (%.1f%% of the run)",
                                name, (unsigned long long)ms->count, hunt_ns(c, sizeof c, cns), f->pct_of_run);
        else
            f->title = hunt_fmt(l, "specialization explosion in `%s`: %llu specializations compiled", name,
                                (unsigned long long)ms->count);
        f->hint = hunt_fmt(l, "A type parameter that takes many runtime values (`Val(n)` built from a variable, tuples "
                              "or StaticArrays of varying size, a new closure per call) compiles one method each: "
                              "pass such values as plain arguments (`n::Int`), or mark the argument `@nospecialize`; "
                              "keep `Val` for a few compile-time constants.");
        hunt_ev(f, "specializations", (double)ms->count, "count");
        hunt_ev(f, "compiles", (double)ncomp, "count");
        hunt_ev(f, "compile_ns", cns, "ns");
        hunt_detail(l, f, "method: %s", ms->method);
    }
}

void hunt_rule_compile_time(const jm_model *m, hunt_list *l)
{
    double ns = (double)(m->compile_ns + m->inference_ns);
    if (!m->compile_count || !m->run_ns || ns < COMPILE_MIN_SHARE * (double)m->run_ns) return;
    hunt_finding *f = hunt_add(l, HUNT_COMPILE_TIME, 1, ns, m);
    if (!f) return;
    char a[32], b[32];
    f->title = hunt_fmt(l, "compile time: %s (%.0f%% of the run) in %llu compiles (inference %s)", hunt_ns(a, sizeof a, ns),
                        f->pct_of_run, (unsigned long long)m->compile_count,
                        hunt_ns(b, sizeof b, (double)m->inference_ns));
    f->hint = hunt_fmt(l, "Most of it is first-call JIT compilation: warm up before timing, precompile the workload "
                          "(a precompile statement list or a system image built with PackageCompiler); if compiles "
                          "continue through the run, see the specialization and instability findings.");
    hunt_ev(f, "compile_ns", ns, "ns");
    hunt_ev(f, "codegen_ns", (double)m->compile_ns, "ns");
    hunt_ev(f, "inference_ns", (double)m->inference_ns, "ns");
    hunt_ev(f, "compiles", (double)m->compile_count, "count");
    hunt_ev(f, "pct_of_run", f->pct_of_run, "%");
    for (uint32_t i = 0; i < m->ncompiles && i < 5; i++)
        hunt_detail(l, f, "%s: %s in %llu compiles", m->compiles[i].signature,
                    hunt_ns(a, sizeof a, (double)(m->compiles[i].codegen_ns + m->compiles[i].inference_ns)),
                    (unsigned long long)m->compiles[i].count);
}
