"""Unit tests of gryvia_operator.api: models, CRD generation, validation."""
