# syntax=docker/dockerfile:1
#
# The minimal gateway as a container: a static Go binary (CGO_ENABLED=0; the
# SQLite driver is pure Go) built in one stage and copied onto a small base
# that has wget for the health check.
#
#   docker build -t minimal --build-arg VERSION=$(git describe --always) .
#   docker run -p 8080:8080 -p 8484:8484 -v minimal-data:/data minimal
#
# The data directory /data (control.db, master.key, token files, mini-app
# tables) is a volume owned by the unprivileged user the gateway runs as.
# For several replicas set MINIMAL_CONTROL_DSN and MINIMAL_MASTER_KEY
# instead of relying on the volume (see deploy/kubernetes and
# docs/operations.md).

ARG GO_VERSION=1.26.8

FROM golang:${GO_VERSION}-alpine AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION}" -o /out/minimal ./cmd/minimal

FROM alpine:3.22
# A fixed uid/gid, so that volume ownership survives image rebuilds.
RUN addgroup -S -g 10001 minimal \
 && adduser -S -D -H -u 10001 -G minimal -h /data -s /sbin/nologin minimal \
 && mkdir -p /data && chown minimal:minimal /data && chmod 0700 /data
COPY --from=build /out/minimal /usr/local/bin/minimal
USER 10001:10001
ENV MINIMAL_DATA_DIR=/data
VOLUME ["/data"]
# 8080: REST (Auto API, admin API, /livez, /readyz, /metrics); 8484: MCP.
EXPOSE 8080 8484
# Liveness only: /readyz also fails while the control plane does not answer,
# which is the load balancer's business, not a reason to restart.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD wget -q -T 2 -O /dev/null http://127.0.0.1:8080/livez || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/minimal"]
CMD ["serve", "--rest-addr", "0.0.0.0:8080", "--mcp-addr", "0.0.0.0:8484"]
