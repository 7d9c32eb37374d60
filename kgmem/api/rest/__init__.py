"""The REST surface: the endpoint table over the agent tools (:mod:`.routes`), its OpenAPI
document and body checks, and the other routes (``/api/me``, ``/api/admin/*``, ``/health``),
each an :class:`~.operation.Operation` the document lists and the route is checked against."""
