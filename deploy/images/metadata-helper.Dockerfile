# syntax=docker/dockerfile:1
# The metadata-helper image (release signatures). Build from the repository root:
#   docker build -f deploy/images/metadata-helper.Dockerfile \
#       --build-arg GIT_COMMIT="$(git rev-parse HEAD)" -t metadata-helper .
#
# Same stages as policy-engine.Dockerfile: Debian 12 (bookworm) for building
# and running, so the binary finds the glibc it was linked against.

FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Reported as cincinnati_mh_build_info{git_commit}.
ARG GIT_COMMIT=unknown
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    GIT_COMMIT="${GIT_COMMIT}" cargo build --release --locked -p metadata-helper --bin metadata-helper \
    && install -D -m 0755 target/release/metadata-helper /out/metadata-helper

# distroless/cc: glibc, libgcc, libssl3 and CA certificates (an https
# graph-data URL is verified against the system roots), no shell or package
# manager. The nonroot variant's user is 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/metadata-helper /usr/local/bin/metadata-helper
USER 65532:65532
# Signatures, status (probes, /metrics, /status): upstream's ports. The
# defaults listen on 127.0.0.1: pass --service.address 0.0.0.0
# --status.address 0.0.0.0 (deploy/kubernetes does) to be reachable from
# outside the container.
EXPOSE 8082 9082
ENTRYPOINT ["/usr/local/bin/metadata-helper"]
