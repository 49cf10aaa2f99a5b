# syntax=docker/dockerfile:1
# skillstream worker image: `docker build -t skillstream .`
# The entry point is the `skillstream` command; the default command runs a worker, configured
# from the environment (docs/operations.md).

ARG PYTHON_IMAGE=python:3.11-slim

# --- build: a virtualenv with the dependencies, then the package -------------------------------
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONDONTWRITEBYTECODE=1
# --without-pip: the image's own pip installs into the venv (pip --python), so neither pip nor
# setuptools ends up in the runtime image.
RUN python -m venv --without-pip /opt/venv
# A C compiler for `skillstream compile` below, in this stage only (its own layer: cached).
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src

# Dependencies from pyproject.toml alone, in their own layer: a source edit does not reinstall
# them. The [rocksdb] extra is installed (SKILLSTREAM_STORE=rocksdb). pytest-asyncio is listed in
# [project] dependencies but only the tests import it: test tools stay out of the image.
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
        deps = p['dependencies'] + p['optional-dependencies']['rocksdb']; \
        print('\n'.join(d for d in deps if not d.startswith('pytest')))" > requirements.txt \
 && cat requirements.txt
RUN --mount=type=cache,target=/root/.cache/pip \
    pip --python /opt/venv/bin/python install -r requirements.txt

# The package itself, without deps (they are all in the layer above): equivalent to
# `pip install '.[rocksdb]'`, minus the test tools. The smoke test imports the worker with -I
# (not from /src) so a dependency missing from pyproject.toml fails the build, not the pod.
COPY README.md LICENSE ./
COPY stream/ stream/
RUN --mount=type=cache,target=/root/.cache/pip \
    pip --python /opt/venv/bin/python install --no-deps . \
 && /opt/venv/bin/skillstream --version \
 && /opt/venv/bin/python -I -c "import rocksdict, stream.pipeline.app"

# The rating arithmetic compiled with mypyc (`skillstream compile`: the same results bit for bit,
# faster workers), with the C compiler installed above and mypyc outside the venv the image
# ships (it runs from PYTHONPATH; a compiled build needs nothing of mypy at run time). The check
# fails the build if the worker would not use it.
RUN --mount=type=cache,target=/root/.cache/pip \
    pip install --target /opt/mypyc "mypy>=1.10" setuptools \
 && PYTHONPATH=/opt/mypyc /opt/venv/bin/skillstream compile \
 && /opt/venv/bin/python -I -c "from stream.ratings.kernels import glicko2_kernel as k, is_compiled; assert is_compiled(k), k"

# --- runtime ------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime
# A fixed numeric uid: Kubernetes' runAsNonRoot can only verify a numeric USER, and the
# manifests' fsGroup/runAsUser (deploy/statefulset.yaml) use the same id.
RUN groupadd --system --gid 10001 skillstream \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
        --home-dir /var/lib/skillstream --shell /usr/sbin/nologin skillstream \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/skillstream
COPY --from=build /opt/venv /opt/venv
# PYTHONDONTWRITEBYTECODE: the root filesystem is read-only in Kubernetes (pip compiled the
# bytecode at install time).
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    SKILLSTREAM_DATA_DIR=/var/lib/skillstream \
    SKILLSTREAM_WEB_PORT=6066 \
    SKILLSTREAM_LOG_FORMAT=json
# Anything written relative to the working directory lands on the data volume, not the image.
WORKDIR /var/lib/skillstream
# No VOLUME: compose and Kubernetes mount the data directory explicitly; a VOLUME line would
# leave an anonymous volume behind for every one-shot `docker run`.
USER 10001:10001
EXPOSE 6066
# slim has no curl: urllib exits non-zero on a refused connection, a timeout or a non-2xx.
# start-period: a worker recovering its tables from the changelogs is not healthy yet.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=4 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://localhost:' + os.environ.get('SKILLSTREAM_WEB_PORT', '6066') + '/health', timeout=4)"]
ENTRYPOINT ["skillstream"]
CMD ["worker"]
