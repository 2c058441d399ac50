# Two images from one build: `docker buildx build --target fn` and `--target runtime`
# (multi-arch through TARGETOS/TARGETARCH). Static binaries on an empty base, numeric
# non-root user, no shell; /etc/passwd and /etc/group name nobody (kpt runs function images as
# `--user nobody`) and the image's user 65532. Without a container engine, `make image-tar`
# makes the same images as multi-platform OCI layout tarballs (docs/images.md: loading,
# publishing, pinning by digest). For the labels on the image index too, as `make image-tar`
# writes them, give buildx `--annotation index:org.opencontainers.image.source=…` and the rest.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/sparkui/sparkui/internal/version.Version=${VERSION}" \
      -o /out/sparkui-fn ./fn && \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
      -ldflags "-s -w -X github.com/sparkui/sparkui/internal/version.Version=${VERSION}" \
      -o /out/sparkui-runtime ./runtime

FROM scratch AS fn
ARG VERSION=dev
ARG REVISION=
LABEL org.opencontainers.image.title="sparkui-fn" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/sparkui/sparkui" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY internal/ociimage/rootfs/etc/ /etc/
COPY --from=build /out/sparkui-fn /sparkui-fn
USER 65532:65532
ENTRYPOINT ["/sparkui-fn"]

FROM scratch AS runtime
ARG VERSION=dev
ARG REVISION=
LABEL org.opencontainers.image.title="sparkui-runtime" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/sparkui/sparkui" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY internal/ociimage/rootfs/etc/ /etc/
COPY --from=build /out/sparkui-runtime /sparkui-runtime
USER 65532:65532
ENTRYPOINT ["/sparkui-runtime"]
