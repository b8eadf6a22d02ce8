# The gateway as a container image: one static binary on an empty image.
#
#   podman build -t modelgate .
#   podman run --rm -p 8080:8080 modelgate
#
# runs Caddyfile.example (the demo upstream, no keys, no network). For a real
# domain, run Caddyfile.production with its environment (see the README,
# "Production"):
#
#   podman run -d --name modelgate -p 80:80 -p 443:443 -p 443:443/udp \
#     --sysctl net.ipv4.ip_unprivileged_port_start=80 \
#     --env-file packaging/modelgate.env -v modelgate-data:/data \
#     modelgate run --config /etc/modelgate/Caddyfile.production
#
# (the sysctl lets the image's unprivileged user bind ports 80 and 443).
#
# The store, Caddy's certificates and the access log live in the /data volume.
ARG GO_VERSION=1.26.8

FROM docker.io/library/golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION names the build in `caddy version` (e.g. --build-arg VERSION=v1.2.0).
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath \
	-ldflags "-s -w -X github.com/modelgate/gateway/caddymodule.Version=${VERSION}" \
	-o /out/usr/bin/caddy ./cmd/caddy
# The image's files: the configs, CA roots for the upstreams' TLS, and the
# directories the unprivileged user writes.
RUN mkdir -p /out/etc/modelgate /out/etc/ssl/certs /writable/data/logs /writable/run \
	&& cp Caddyfile.example Caddyfile.production /out/etc/modelgate/ \
	&& cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/

FROM scratch
COPY --from=build /out/ /
COPY --from=build --chown=65532:65532 /writable/data /data
COPY --from=build --chown=65532:65532 /writable/run /run/modelgate
USER 65532:65532
WORKDIR /data
ENV XDG_DATA_HOME=/data \
	XDG_CONFIG_HOME=/data/config \
	STATE_DIRECTORY=/data \
	RUNTIME_DIRECTORY=/run/modelgate \
	LOGS_DIRECTORY=/data/logs
VOLUME /data
EXPOSE 8080 80 443 443/udp
ENTRYPOINT ["/usr/bin/caddy"]
CMD ["run", "--config", "/etc/modelgate/Caddyfile.example"]
