"""CRD tooling built on the API models: structural OpenAPI schemas, the CRD generator, the
CRD reference and the check of manifests against a kind's schema.

Kept apart from the types so that importing a model never loads the generator.
"""
