# syntax=docker/dockerfile:1
# The policy-engine image. Build from the repository root:
#   docker build -f deploy/images/policy-engine.Dockerfile \
#       --build-arg GIT_COMMIT="$(git rev-parse HEAD)" -t policy-engine .
#
# Same stages as graph-builder.Dockerfile: Debian 12 (bookworm) for building
# and running, so the binary finds the glibc it was linked against. Built on
# its own, the policy-engine uses rustls and needs no OpenSSL headers (built
# together with the graph-builder, cargo's feature unification would link
# OpenSSL 3, which the runtime image has too).

FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Reported as cincinnati_pe_build_info{git_commit}.
ARG GIT_COMMIT=unknown
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    GIT_COMMIT="${GIT_COMMIT}" cargo build --release --locked -p policy-engine --bin policy-engine \
    && install -D -m 0755 target/release/policy-engine /out/policy-engine

# distroless/cc: glibc, libgcc, libssl3 and CA certificates (an https
# upstream is verified against the system roots), no shell or package
# manager. The nonroot variant's user is 65532.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/policy-engine /usr/local/bin/policy-engine
USER 65532:65532
# Graph API, status (probes, /metrics, /status). The defaults listen on
# 127.0.0.1: pass --service.address 0.0.0.0 --status.address 0.0.0.0
# (deploy/kubernetes does) to be reachable from outside the container.
EXPOSE 8081 9081
ENTRYPOINT ["/usr/local/bin/policy-engine"]
