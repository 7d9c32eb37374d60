"""``/sparql``: the read-only SPARQL 1.1 Protocol over the caller's graphs, and its result
formats."""
