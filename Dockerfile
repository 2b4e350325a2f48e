# The dynamic-config image, for people with a Docker engine (or buildah, podman, kaniko).
# `make image` builds the same image without one (tools/ociimage: an OCI tarball).
#
#   docker build -t dynamic-config:$(make -s print-version | tr + _) \
#     --build-arg VERSION=$(make -s print-version) --build-arg REVISION=$(git rev-parse HEAD) .
#
# The final stage is scratch: the static binary alone, no shell, no package manager,
# running as 65532:65532 (the chart's runAsUser/runAsGroup).

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=v0.0.0-dev
ARG TARGETOS=linux
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags "-s -w -X main.version=${VERSION}" -o /out/dynamic-config ./cmd/dynamic-config

FROM scratch
ARG VERSION=v0.0.0-dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="dynamic-config" \
      org.opencontainers.image.description="dynamic-config admission: the gRPC decider, the admission front door and the offline doors, in one binary" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/dynamic-config-admission/dynamic-config" \
      org.opencontainers.image.url="https://github.com/dynamic-config-admission/dynamic-config" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build --chmod=0555 /out/dynamic-config /dynamic-config
ENV PATH=/
USER 65532:65532
ENTRYPOINT ["/dynamic-config"]
