def test_probe(late_trace):
    for s in ("2h", "2^63"):
        m = late_trace(s)
        print(m.start_ns, m.end_ns, len(m.slices), len(m.flows.src_slice), len(m.async_spans), len(m.logs), len(m.counters.series), len(m.instants))
        print([(g.pid, g.name, [t.name for t in g.tracks]) for g in m.processes][:2])
        print(m.flows.src_slice, m.flows.dst_slice)
