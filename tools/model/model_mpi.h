/*
 * model_mpi.h — the MPI view of a job (plugins/mpi events of every rank): each rank's calls
 * on the job's clock (rank 0's: the offsets measured at MPI_Init and MPI_Finalize, linear
 * between), point-to-point messages joined sender → receiver by their ids (never by
 * clock), and collective instances (the n-th collective on a communicator of every
 * member). What tools/hunt's wait-state rules and `jager summary` read.
 *
 * Part of the model layer (tools/README.md).
 */
#ifndef JAGER_TOOLS_MODEL_MPI_H
#define JAGER_TOOLS_MODEL_MPI_H

#include <stddef.h>
#include <stdint.h>

#include "job.h"

/** One MPI call (mpi.call), times on the job's clock. */
typedef struct jm_mpi_call {
    uint64_t t0, t1;        /**< begin, end (ns, rank 0's clock) */
    uint32_t part;          /**< index in the job's parts */
    uint32_t func;          /**< index in jm_mpi.funcs */
    int64_t dest, tag, source, recv_tag, root;
    uint64_t seq, recv_seq, comm, comm_size, bytes, recv_bytes;
    uint64_t caller;        /**< stack id in the part's recording (0 none) */
    uint64_t prev_end;      /**< end of this rank's previous call that could wait (not MPI_I*, MPI_Start*,
                                 *_init): the rank's work before this call began there */
    uint32_t prev;          /**< index of that call in jm_mpi.calls, UINT32_MAX none */
    uint64_t mpi_before;    /**< time this rank spent in MPI calls before this one (for free time between calls) */
    uint64_t local_t0;      /**< begin on the part's own clock, as recorded (the event's time_ns) */
    uint32_t thread;        /**< thread index in the part's recording */
    uint64_t os_tid;        /**< that thread's OS id (0 unknown): its rusage.thread readings */
} jm_mpi_call;

/** One rusage.thread reading (rusage plugin) of a part's thread: cumulative counters. */
typedef struct jm_mpi_ru {
    uint32_t part;
    uint64_t os_tid;
    uint64_t t;             /**< the part's own clock */
    double runq_ns, cpu_ns; /**< time runnable but off the CPU, CPU time (cumulative) */
} jm_mpi_ru;

/** One point-to-point message, both sides found. */
typedef struct jm_mpi_msg {
    uint32_t send_part, recv_part;
    uint64_t send_start;    /**< the send call began / Isend was started */
    uint64_t send_end;      /**< the blocking send returned (= send_start for Isend) */
    uint32_t send_call;     /**< index in calls of the send (or the Isend) */
    uint32_t recv_call;     /**< index in calls of the call that waited: Recv, or the Wait that completed an Irecv */
    uint32_t send_wait_call; /**< the call the sender waited in: the blocking send, or the Wait that completed the Isend */
    uint32_t recv_post_call; /**< the call that posted the receive: Recv, or the Irecv */
    uint64_t recv_post;     /**< when the receive was posted (Recv began, Irecv started) */
    uint64_t recv_end;      /**< when the receive completed */
    uint64_t bytes;
    int blocking_send;      /**< 1 Send/Ssend/…, 0 Isend */
    uint32_t send_prev;     /**< the sender's last call before this send that synchronised with the receiver
                                 (completed a message from it, or a send to it); UINT32_MAX none */
    uint32_t recv_prev;     /**< the same on the receiver, before it posted this receive */
} jm_mpi_msg;

/** One rank. */
typedef struct jm_mpi_rank {
    int64_t rank;
    uint64_t start, end;    /**< first and last MPI call (job clock) */
    uint64_t mpi_ns;        /**< time in MPI calls other than Init and Finalize */
    int64_t offset0, offset1; /**< clock offsets to rank 0 at Init and Finalize (0 unknown) */
    int clock_known;
    /* private: the mapping jm_mpi_job_time() applies (offsets as used, their anchors) */
    int64_t use_off0, use_off1;
    uint64_t anchor0, anchor1;
} jm_mpi_rank;

/** The job's MPI view. */
typedef struct jm_mpi {
    jm_mpi_call *calls;     /**< by part, then begin time */
    size_t ncalls;
    jm_mpi_msg *msgs;
    size_t nmsgs;
    char **funcs;           /**< function names ("MPI_Recv") */
    uint32_t nfuncs;
    jm_mpi_rank *ranks;     /**< one per part, same index */
    size_t nranks;
    uint64_t unmatched_sends, unmatched_recvs;
    uint64_t clock_violations; /**< messages whose receive completed before the send began (as aligned) */
    uint64_t clock_repaired;   /**< of those, causal after the repair (the controlled logical clock) */
    uint64_t job_start, job_end;
    size_t *first;          /**< index of each part's first call in calls (nranks + 1 entries) */
    jm_mpi_ru *ru;          /**< rusage readings of every part, by (part, os_tid, t); none without the plugin */
    size_t nru;
    char **sites;           /**< the program's span sites by name (all parts), model_mpi_work.c */
    uint32_t nsites;
    struct jm_mpi_span *spans; /**< private: every part's spans, by (part, thread, begin) */
    size_t nspans;
    size_t *first_span;        /**< private: part p's spans are spans[first_span[p] .. first_span[p + 1]) */
    uint64_t *max_span;        /**< private: part p's longest span */
    struct jm_mpi_step *steps; /**< private: the clock-condition repair's rises of every part, in time order */
    size_t *nsteps;            /**< private: part p's rises are steps[nsteps[p] .. nsteps[p + 1]) */
} jm_mpi;

/**
 * \brief Read the mpi.* events of every part of \p j (each reader is rewound after).
 * \return 0 (a job without MPI gives ncalls 0), or -1 on out of memory.
 */
int jm_mpi_build(const jm_job *j, jm_mpi **out);
void jm_mpi_free(jm_mpi *m);
/** Index of \p name in m->funcs, or UINT32_MAX. */
uint32_t jm_mpi_func(const jm_mpi *m, const char *name);
/**
 * \brief A rank's time outside MPI from the end of call \p from (UINT32_MAX: the end of its
 *        MPI_Init, or its first call) to the start of call \p to (same part): the work it did
 *        in between. Scalasca's delay is the difference of two ranks' such times.
 */
double jm_mpi_free_ns(const jm_mpi *m, uint32_t from, uint32_t to);
/**
 * \brief A time of part \p part's recording (its own clock, as an event's time_ns) on the
 *        job's clock: the rank's offsets to rank 0 (linear between MPI_Init and
 *        MPI_Finalize) and the clock-condition repair's moves — the clock every time in
 *        jm_mpi_call and jm_mpi_msg is on. A part without MPI clock events is unchanged.
 */
uint64_t jm_mpi_job_time(const jm_mpi *m, uint32_t part, uint64_t t);
/**
 * \brief jm_mpi_free_ns() less the time the rank's thread was runnable but off the CPU in
 *        that stretch (rusage plugin's runq_ns, interpolated between readings): the work it
 *        could do. Without readings covering the stretch, the same as jm_mpi_free_ns().
 * \param descheduled receives the time subtracted (NULL allowed)
 */
double jm_mpi_work_ns(const jm_mpi *m, uint32_t from, uint32_t to, double *descheduled);
/** Private (jm_mpi_build): read every part's spans for jm_mpi_work_sites(); -1 on out of memory. */
int jm_mpi_read_spans(jm_mpi *m, const jm_job *j);
/**
 * \brief What a rank computed in the stretch jm_mpi_free_ns() measures (from the end of call
 *        \p from to the start of call \p to, on \p to's thread): the self time of each of its
 *        span sites there, added to \p acc[site] (m->nsites entries).
 * \return the time covered by its outermost spans in the stretch (0 without spans)
 */
double jm_mpi_work_sites(const jm_mpi *m, uint32_t from, uint32_t to, double *acc);
/** 1 if the function is a collective (Barrier, Bcast, Allreduce, …; not the I- variants). */
int jm_mpi_is_collective(const char *func);

#endif
