/*
 * jager_dispatch.h — the "jager.dispatch/1" extension of the dispatch plugin.
 *
 * The dispatch plugin records what a language runtime's dispatcher does: the argument
 * signatures each call site sees and how often, compile events, the growth of each
 * method's specializations and type-instability verdicts. It does not observe anything
 * by itself: a binding (the Julia sensor, bindings/julia/src/dispatch.jl) feeds it through
 * this table, obtained with
 * \code
 * const jager_dispatch_api *d = jager_extension_get(JAGER_DISPATCH_EXTENSION_ID);
 * if (d && d->struct_size >= sizeof(*d)) d->signature_seen(site, "Tuple{typeof(f), Float64}");
 * \endcode
 * The table lives until jager_shutdown(); stop using it before calling jager_shutdown()
 * (the plugin answers JAGER_E_STATE once stopped, and its code is unloaded afterwards).
 *
 * Every function is [any-thread]: calls may come from several threads at once. None of
 * them blocks on I/O; each takes the plugin's table lock for a hash lookup and the host's
 * string lock for interning, so call them off the hot path (on a new signature, at flush).
 * Strings are borrowed for the duration of the call; longer than 4 KiB they are cut at a
 * UTF-8 character boundary. Misuse (site 0, an unknown site, a NULL or empty string, a call
 * after stop) returns JAGER_E_INVALID or JAGER_E_STATE and is reported once per kind
 * through the host's diagnostics; the program runs on.
 *
 * The layout is fixed for ABI major 1: fields are only appended, each with the version
 * that added it; read a field only if struct_size covers it. Every pointer is 8 bytes on
 * the supported hosts, so from Julia function i (0-based, in declaration order) is at
 * byte offset 8 + 8 i.
 */
#ifndef JAGER_DISPATCH_H
#define JAGER_DISPATCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Versioned id of the table, for jager_extension_get(). */
#define JAGER_DISPATCH_EXTENSION_ID "jager.dispatch/1"

/** Bits of the `flags` of an instability verdict (dispatch.instability). Stable values. */
enum jager_dispatch_flag {
    JAGER_DISPATCH_RUNTIME_DISPATCH = 1, /**< a call left to runtime dispatch */
    JAGER_DISPATCH_BAD_UNION = 2,        /**< a value typed as a union of ≥ 2 non-singleton types */
    JAGER_DISPATCH_BOX = 4,              /**< a captured variable boxed (Core.Box) */
    JAGER_DISPATCH_ABSTRACT_RETURN = 8,  /**< the inferred return type is not concrete (weak signal) */
    JAGER_DISPATCH_ONCE_PER_CALL = 16    /**< the statement sits outside every loop of the signature's method */
};
/** Bits 32–63 of the flags: how many times per call the offending statements run, when the
 *  code fixes it (1 outside loops, a literal loop's trip count); 0 when unknown. */
#define JAGER_DISPATCH_RUNS_SHIFT 32

/** The extension table. Static storage owned by the plugin. */
typedef struct jager_dispatch_api {
    uint32_t struct_size; /**< sizeof(jager_dispatch_api) of the plugin */
    uint32_t reserved0;
    /* ---- 1.0 ---- */
    /**
     * \brief Call site \p site saw argument signature \p signature. The first sight of a
     *        (site, signature) pair emits dispatch.signature with calls = 0; later sights
     *        of the same pair do nothing.
     * \return JAGER_OK; JAGER_E_INVALID; JAGER_E_STATE after stop; JAGER_E_FULL past
     *         max_signatures; JAGER_E_NOMEM.
     */
    int32_t (*signature_seen)(uint32_t site, const char *signature);
    /**
     * \brief The exact number of calls of \p site with \p signature so far (an absolute
     *        count, not a delta: send it again whenever it moved). Registers the pair if
     *        it is new (as signature_seen). The summary written at stop carries the last value.
     * \return as signature_seen().
     */
    int32_t (*signature_count)(uint32_t site, const char *signature, uint64_t calls);
    /**
     * \brief A root compile: \p codegen_ns of code generation and \p inference_ns of type
     *        inference for \p signature (the root MethodInstance's specTypes), seen at
     *        \p time_ns (0: now). Emits dispatch.compile.
     * \return JAGER_OK; JAGER_E_INVALID; JAGER_E_STATE; JAGER_E_NOMEM.
     */
    int32_t (*compile)(uint64_t time_ns, uint64_t codegen_ns, uint64_t inference_ns, const char *signature);
    /**
     * \brief A census of \p method (its display, e.g. "f(x::Real) in Main at pic.jl:12",
     *        the identity of the method) found \p count specializations. Emits
     *        dispatch.specializations when the count differs from the method's previous
     *        census (always on the first), and keeps the series for the summary.
     * \param file, line where the method is defined (file may be "" if unknown).
     * \return JAGER_OK; JAGER_E_INVALID; JAGER_E_STATE; JAGER_E_FULL past max_methods; JAGER_E_NOMEM.
     */
    int32_t (*specializations)(const char *method, const char *file, uint32_t line, uint64_t count);
    /**
     * \brief A type-stability verdict: \p signature at \p site is unstable for the reasons
     *        in \p flags (jager_dispatch_flag bits, non-zero), explained by \p reason (the
     *        statement, e.g. "runtime dispatch: +(::Real, ::Real) at pic.jl:42") and \p chain
     *        (the call chain down to it, "f → g → h"; may be ""). Emits dispatch.instability
     *        once per (site, signature); repeats return JAGER_OK and emit nothing.
     * \return JAGER_OK; JAGER_E_INVALID; JAGER_E_STATE; JAGER_E_NOMEM.
     */
    int32_t (*instability)(uint32_t site, const char *signature, uint64_t flags, const char *reason,
                           const char *chain);
    /**
     * \brief Distinct signatures recorded at \p site, into \p out (0 for a site never fed).
     * \return JAGER_OK; JAGER_E_INVALID for a NULL \p out.
     */
    int32_t (*site_signatures)(uint32_t site, uint64_t *out);
    /**
     * \brief The call count last sent for (\p site, \p signature) into \p out.
     * \return JAGER_OK; JAGER_E_NOTFOUND for a pair never recorded; JAGER_E_INVALID.
     */
    int32_t (*signature_calls)(uint32_t site, const char *signature, uint64_t *out);
    /**
     * \brief The specialization count of \p method at its last census into \p out, and the
     *        number of censuses that saw it into \p censuses (may be NULL).
     * \return JAGER_OK; JAGER_E_NOTFOUND for a method never counted; JAGER_E_INVALID.
     */
    int32_t (*method_specializations)(const char *method, uint64_t *out, uint64_t *censuses);
    void *reserved[8]; /**< NULL; future versions put functions here */
} jager_dispatch_api;

#ifdef __cplusplus
}
#endif

#endif /* JAGER_DISPATCH_H */
