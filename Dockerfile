# syntax=docker/dockerfile:1
# The Gryvia operator image: `gryvia-operator` (kopf) in a virtual environment, run as an
# unprivileged user on a read-only root filesystem (the chart mounts an emptyDir at /tmp).
#
#   docker build -t ghcr.io/gryvia/gryvia-operator:0.1.0 .
#
# The chart sets the container's command to `gryvia-operator` explicitly; the ENTRYPOINT below
# is the same, for `docker run`.

ARG PYTHON_IMAGE=python:3.11-slim

# --- builder: install the package and its operator extra into /opt/venv ---------------------
FROM ${PYTHON_IMAGE} AS builder

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
# Behind a TLS-intercepting proxy or with a private index, pass pip's own settings (they are
# only build arguments, never in the final image): tools/image/build.sh mounts the host's CA
# bundle and passes PIP_CERT.
ARG PIP_CERT
ARG PIP_INDEX_URL

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src
# Only what the build needs: the metadata first, then the two packages.
COPY pyproject.toml README.md ./
COPY gryvia_cli ./gryvia_cli
COPY gryvia_operator ./gryvia_operator
RUN pip install --upgrade pip setuptools wheel \
 && pip install ".[operator,stripe]" \
 && python -m compileall -q /opt/venv \
 && gryvia-operator --help > /dev/null

# --- final: the venv on a clean slim image ---------------------------------------------------
FROM ${PYTHON_IMAGE}

LABEL org.opencontainers.image.title="gryvia-operator" \
      org.opencontainers.image.description="Gryvia operator: GPU jobs, tenants, quotas and usage on Kubernetes" \
      org.opencontainers.image.licenses="Apache-2.0"

# A named user for uid/gid 65532 (the chart's runAsUser/runAsGroup), so that tools that look up
# the current user (getpass, kopf's peer identity outside a pod) find one.
RUN groupadd --system --gid 65532 nonroot \
 && useradd --system --uid 65532 --gid 65532 --home-dir /tmp --no-create-home \
      --shell /usr/sbin/nologin nonroot

COPY --from=builder /opt/venv /opt/venv

# Bytecode was compiled in the builder; nothing is written at run time (read-only root).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp

USER 65532:65532
WORKDIR /tmp

# health (/healthz, /readyz), metrics (/metrics), webhook (HTTPS)
EXPOSE 8080 9090 9443

ENTRYPOINT ["gryvia-operator"]
