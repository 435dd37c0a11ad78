# syntax=docker/dockerfile:1
# The toolwire gateway as a container image: a static binary (CGO off) on an
# empty base, run as the unprivileged user 65532 with /data as its state
# volume. The default command is the gateway's embedded default (the
# reference tools in process and `toolwire serve --stdio` as a child) on
# 0.0.0.0:8090/mcp, with /healthz, /readyz and /metrics on 0.0.0.0:8091.
#   docker build -t toolwire --build-arg VERSION=v1.2.3 .
#   docker run --rm -p 127.0.0.1:8090:8090 -p 127.0.0.1:8091:8091 toolwire
# Another config: mount it and pass `gateway --config /etc/toolwire/gateway.yaml`.
# scripts/test.d/60-release.sh builds the final stage below without a
# registry (buildah, from a local rootfs made by the same deploy/image/rootfs.sh).

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends busybox-static ca-certificates \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/toolwire/toolwire.stamped=${VERSION}" \
      -o /out/toolwire ./cmd/toolwire \
    && sh deploy/image/rootfs.sh /out/toolwire /bin/busybox /etc/ssl/certs/ca-certificates.crt /rootfs

FROM scratch
ARG VERSION=dev
COPY --from=build /rootfs/ /
# /data is created by this COPY, so that the directory itself (not only what
# it holds) is owned by the user the gateway runs as: its state lives there.
COPY --from=build --chown=65532:65532 /rootfs-data/ /data/
USER 65532:65532
ENV HOME=/data PATH=/usr/local/bin:/bin
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8090 8091
LABEL org.opencontainers.image.title="toolwire-gateway" \
      org.opencontainers.image.description="toolwire: many MCP servers behind one endpoint" \
      org.opencontainers.image.source="https://github.com/toolwire/toolwire" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["/bin/wget", "-q", "-O", "/dev/null", "http://127.0.0.1:8091/readyz"]
ENTRYPOINT ["/usr/local/bin/toolwire"]
CMD ["gateway", "--listen", "0.0.0.0:8090", "--admin-listen", "0.0.0.0:8091"]
