"""The REST surface: the endpoint table over the agent tools (:mod:`.routes`), its OpenAPI
document and body checks, and the account routes (``/api/me``, ``/api/admin/*``, ``/health``)."""
