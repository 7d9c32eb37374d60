"""GraphQL at ``/graphql``: the schema (query, mutation, types, result unions), its limits
and preparation off the event loop, and the endpoint that serves it (:mod:`.endpoint`)."""
