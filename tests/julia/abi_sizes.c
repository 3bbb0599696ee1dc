/*
 * abi_sizes.c — prints the size and field offsets of every C struct the Julia binding
 * mirrors, one struct per line: "<name> <sizeof> <field>:<offset> …". The Julia test
 * bindings/julia/test/abi_tests.jl compares them with sizeof/fieldoffset of its mirrors.
 */
#include <stddef.h>
#include <stdio.h>

#include "jager.h"
#include "jager_reader.h"

#define F(type, field) printf(" %s:%zu", #field, offsetof(type, field))
#define BEGIN(type) printf("%s %zu", #type, sizeof(type))
#define END() printf("\n")

int main(void)
{
    BEGIN(jager_config);
    F(jager_config, struct_size); F(jager_config, disable); F(jager_config, output);
    F(jager_config, plugins); F(jager_config, plugin_path); F(jager_config, filter);
    F(jager_config, ring_bytes); F(jager_config, ring_mode); F(jager_config, flush_interval_ms);
    F(jager_config, sample_mode); F(jager_config, sample_n); F(jager_config, sample_interval_ns);
    F(jager_config, max_threads); F(jager_config, quiet);
    END();

    BEGIN(jager_span);
    F(jager_span, start_ns); F(jager_span, site); F(jager_span, id);
    END();

    BEGIN(jager_attr);
    F(jager_attr, key); F(jager_attr, kind); F(jager_attr, reserved); F(jager_attr, value);
    END();

    BEGIN(jager_site_stat);
    F(jager_site_stat, struct_size); F(jager_site_stat, site); F(jager_site_stat, calls);
    F(jager_site_stat, total_ns); F(jager_site_stat, min_ns); F(jager_site_stat, max_ns);
    F(jager_site_stat, bytes); F(jager_site_stat, errors); F(jager_site_stat, p50_ns);
    F(jager_site_stat, p90_ns); F(jager_site_stat, p99_ns); F(jager_site_stat, hist);
    F(jager_site_stat, thinned); F(jager_site_stat, dropped);
    END();

    BEGIN(jager_stat);
    F(jager_stat, struct_size); F(jager_stat, threads); F(jager_stat, events_emitted);
    F(jager_stat, events_recorded); F(jager_stat, events_dropped); F(jager_stat, dropped);
    F(jager_stat, events_written); F(jager_stat, spans_total); F(jager_stat, span_cost_ns_x1000);
    F(jager_stat, ring_bytes); F(jager_stat, events_pending); F(jager_stat, drop_reports);
    F(jager_stat, spans_cross_thread); F(jager_stat, sinks); F(jager_stat, reserved0);
    END();

    BEGIN(jager_trace_context);
    F(jager_trace_context, trace_id); F(jager_trace_context, span_id); F(jager_trace_context, flags);
    F(jager_trace_context, version); F(jager_trace_context, reserved);
    END();

    /* Reader structs, mirrored by the tests' reader (bindings/julia/test/reader.jl). */
    BEGIN(jager_event);
    F(jager_event, rec); F(jager_event, thread); F(jager_event, type); F(jager_event, reserved);
    F(jager_event, time_ns); F(jager_event, end_ns);
    END();

    BEGIN(jager_attr_view);
    F(jager_attr_view, key); F(jager_attr_view, key_len); F(jager_attr_view, kind);
    F(jager_attr_view, i64); F(jager_attr_view, f64); F(jager_attr_view, str); F(jager_attr_view, str_len);
    END();

    BEGIN(jager_frame);
    F(jager_frame, func); F(jager_frame, file); F(jager_frame, line); F(jager_frame, inline_depth);
    END();

    BEGIN(jager_reader_info);
    F(jager_reader_info, struct_size); F(jager_reader_info, clean_end);
    END();

    /* Record layouts the tests' reader decodes by offset. */
    BEGIN(jager_rec_span);
    F(jager_rec_span, start_ns); F(jager_rec_span, end_ns); F(jager_rec_span, span_id);
    F(jager_rec_span, parent_id); F(jager_rec_span, bytes);
    END();

    BEGIN(jager_rec_log);
    F(jager_rec_log, time_ns); F(jager_rec_log, span_id); F(jager_rec_log, site);
    F(jager_rec_log, trace_id); F(jager_rec_log, ctx_span_id); F(jager_rec_log, body_len);
    F(jager_rec_log, nattrs);
    END();

    BEGIN(jager_rec_span_attr);
    F(jager_rec_span_attr, span_id); F(jager_rec_span_attr, nattrs);
    END();

    BEGIN(jager_rec_span_error);
    F(jager_rec_span_error, time_ns); F(jager_rec_span_error, span_id); F(jager_rec_span_error, msg_len);
    END();
    return 0;
}
