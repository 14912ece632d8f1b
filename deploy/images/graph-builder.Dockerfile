# syntax=docker/dockerfile:1
# The graph-builder image. Build from the repository root:
#   docker build -f deploy/images/graph-builder.Dockerfile \
#       --build-arg GIT_COMMIT="$(git rev-parse HEAD)" -t graph-builder .
#
# The build and runtime stages are both Debian 12 (bookworm), so the binary
# finds the glibc and OpenSSL 3 it was linked against: the graph-builder talks
# to registries through native-tls (OpenSSL), which accepts a mirror's
# self-signed certificate once it is trusted.

FROM docker.io/library/rust:1.95-bookworm AS build
# pkg-config and the OpenSSL headers are what openssl-sys builds against; the
# versions are bookworm's, matching the runtime's libssl3.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends pkg-config libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Reported as cincinnati_gb_build_info{git_commit}.
ARG GIT_COMMIT=unknown
# The cache mounts keep crates and build artefacts between builds; the binary
# is copied out in the same step because the target directory is not part of
# the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    GIT_COMMIT="${GIT_COMMIT}" cargo build --release --locked -p graph-builder --bin graph-builder \
    && install -D -m 0755 target/release/graph-builder /out/graph-builder

# distroless/cc: glibc, libgcc, libssl3 and CA certificates, no shell or
# package manager. The nonroot variant's user is 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/graph-builder /usr/local/bin/graph-builder
# Numeric, so Kubernetes can verify runAsNonRoot without a passwd lookup.
USER 65532:65532
# Graph API, public graph-data, status (probes, /metrics, /status). The
# defaults listen on 127.0.0.1: configure [service] and [status] address =
# "0.0.0.0" (deploy/kubernetes does) to be reachable from outside the container.
# glibc gives threads their own malloc arenas, each keeping its own peak, and
# raises its mmap threshold as large blocks are freed, so later ones fragment
# the heap. The graph-builder allocates little at a time: one arena and a
# fixed threshold keep a full scrape near its heap, ~59 MiB instead of ~82
# (docs/benchmarks-graph-builder.md; the benchmark runs with these).
ENV MALLOC_ARENA_MAX=1 \
    MALLOC_MMAP_THRESHOLD_=131072
EXPOSE 8080 8090 9080
ENTRYPOINT ["/usr/local/bin/graph-builder"]
