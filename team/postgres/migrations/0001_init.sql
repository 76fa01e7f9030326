-- Team memory: repositories, their current entries, and every version.
CREATE TABLE repos (
    repo          TEXT   PRIMARY KEY,
    version       BIGINT NOT NULL,
    checksum      TEXT   NOT NULL,
    last_modified BIGINT NOT NULL
);

CREATE TABLE entries (
    repo     TEXT NOT NULL REFERENCES repos (repo) ON DELETE CASCADE,
    key      TEXT NOT NULL,
    content  TEXT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (repo, key)
);

CREATE TABLE versions (
    repo        TEXT    NOT NULL REFERENCES repos (repo) ON DELETE CASCADE,
    version     BIGINT  NOT NULL,
    checksum    TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    entry_count INTEGER NOT NULL,
    author      TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (repo, version)
);

-- One row per key a version wrote; NULL content and checksum is a deletion.
CREATE TABLE changes (
    repo     TEXT   NOT NULL,
    version  BIGINT NOT NULL,
    key      TEXT   NOT NULL,
    content  TEXT,
    checksum TEXT,
    PRIMARY KEY (repo, key, version),
    FOREIGN KEY (repo, version) REFERENCES versions (repo, version) ON DELETE CASCADE
);
CREATE INDEX changes_by_version ON changes (repo, version);

CREATE TABLE tokens (
    id         TEXT    PRIMARY KEY,
    hash       TEXT    NOT NULL UNIQUE,
    repo       TEXT    NOT NULL,
    read_only  BOOLEAN NOT NULL,
    name       TEXT    NOT NULL DEFAULT '',
    created_at BIGINT  NOT NULL,
    revoked_at BIGINT
);
