//! Uploaded files: a row each, their bytes in chunks of `CHUNK` bytes, written as they arrive
//! and read back one chunk at a time, so no statement holds more than a chunk and no write lock
//! is held longer than one chunk's insert.
//!
//! With `ORCHESTRA_FILES_DIR` set, a file's bytes go to that directory instead (`{id}.part`
//! while arriving, renamed `{id}` once whole) and the row stays in the database; a file stored
//! before the directory was set is still read from its chunks.

use super::Db;

/// The bytes of one chunk row: large enough that a 10 MiB file is 40 rows, small enough that a
/// reader or writer holds little at once.
pub const CHUNK: usize = 256 << 10;

/// A file as its row describes it.
#[derive(Clone, Debug, PartialEq, Eq, sqlx::FromRow)]
pub struct FileRow {
    pub id: i64,
    pub instance_id: i64,
    pub step_index: i64,
    pub field: String,
    pub name: String,
    pub media_type: String,
    pub size: i64,
    pub sha256: String,
    pub created_at: i64,
}

/// Begins a file that is arriving: nothing keeps it until an answer does (`keep_in`).
pub async fn begin(
    db: &Db,
    instance: i64,
    step: i64,
    field: &str,
    name: &str,
    now: i64,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "INSERT INTO files (instance_id, step_index, field, name, created_at) \
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(instance)
    .bind(step)
    .bind(field)
    .bind(name)
    .bind(now)
    .fetch_one(&db.pool)
    .await
}

pub async fn put_chunk(db: &Db, file: i64, seq: i64, data: &[u8]) -> Result<(), sqlx::Error> {
    if let Some(dir) = db.files_dir() {
        use tokio::io::AsyncWriteExt;
        let mut part = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(arriving(dir, file))
            .await?;
        part.write_all(data).await?;
        return Ok(part.flush().await?);
    }
    sqlx::query("INSERT INTO file_chunks (file_id, seq, data) VALUES ($1, $2, $3)")
        .bind(file)
        .bind(seq)
        .bind(data)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Says what an arrived file is, once all of it is stored.
pub async fn finish(
    db: &Db,
    file: i64,
    media_type: &str,
    size: i64,
    sha256: &str,
) -> Result<(), sqlx::Error> {
    if let Some(dir) = db.files_dir() {
        let part = tokio::fs::File::open(arriving(dir, file)).await?;
        part.sync_all().await?;
        tokio::fs::rename(arriving(dir, file), whole(dir, file)).await?;
    }
    sqlx::query("UPDATE files SET media_type = $1, size = $2, sha256 = $3 WHERE id = $4")
        .bind(media_type)
        .bind(size)
        .bind(sha256)
        .bind(file)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Removes a file that no answer keeps: its chunks, then its row (a kill in between leaves an
/// arriving row, which `sweep` finds).
pub async fn discard(db: &Db, file: i64) -> Result<(), sqlx::Error> {
    erase_bytes(db, file).await?;
    sqlx::query("DELETE FROM files WHERE id = $1 AND kept = 0")
        .bind(file)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Erases the bytes of a kept file (retention): from the files directory when one is set, and
/// its chunks, one statement of its own so the write lock is held for one file's rows. Its row
/// goes with its instance's erasure (`retention::erase`).
pub async fn erase_bytes(db: &Db, file: i64) -> Result<(), sqlx::Error> {
    if let Some(dir) = db.files_dir() {
        for path in [arriving(dir, file), whole(dir, file)] {
            match tokio::fs::remove_file(path).await {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
    }
    sqlx::query("DELETE FROM file_chunks WHERE file_id = $1")
        .bind(file)
        .execute(&db.pool)
        .await
        .map(|_| ())
}

/// Keeps the files an answer names, in the answer's transaction: only arriving files of its
/// instance and step, so an answer cannot claim another's file.
pub(crate) async fn keep_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    instance: i64,
    step: i64,
    files: &[i64],
) -> Result<(), sqlx::Error> {
    for file in files {
        sqlx::query(
            "UPDATE files SET kept = 1 WHERE id = $1 AND instance_id = $2 AND step_index = $3 \
             AND kept = 0",
        )
        .bind(file)
        .bind(instance)
        .bind(step)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// Removes up to `batch` files still arriving that began before `before`: uploads a kill or a
/// lost answer left behind. Each is removed on its own, so no lock is held for long.
pub async fn sweep(db: &Db, before: i64, batch: i64) -> Result<u64, sqlx::Error> {
    let stale: Vec<i64> = sqlx::query_scalar(
        "SELECT id FROM files WHERE kept = 0 AND created_at < $1 ORDER BY created_at LIMIT $2",
    )
    .bind(before)
    .bind(batch)
    .fetch_all(db.reader())
    .await?;
    for file in &stale {
        discard(db, *file).await?;
    }
    Ok(stale.len() as u64)
}

const COLUMNS: &str =
    "id, instance_id, step_index, field, name, media_type, size, sha256, created_at";

/// A kept file of an instance.
pub async fn kept(db: &Db, instance: i64, file: i64) -> Result<Option<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM files WHERE id = $1 AND instance_id = $2 AND kept = 1"
    ))
    .bind(file)
    .bind(instance)
    .fetch_optional(db.reader())
    .await
}

/// An instance's kept files, in the order they came.
pub async fn of_instance(db: &Db, instance: i64) -> Result<Vec<FileRow>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM files WHERE instance_id = $1 AND kept = 1 ORDER BY id"
    ))
    .bind(instance)
    .fetch_all(db.reader())
    .await
}

/// One chunk of a file's bytes; `None` past its last.
pub async fn chunk(db: &Db, file: i64, seq: i64) -> Result<Option<Vec<u8>>, sqlx::Error> {
    if let Some(dir) = db.files_dir() {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        match tokio::fs::File::open(whole(dir, file)).await {
            Ok(mut whole) => {
                whole
                    .seek(std::io::SeekFrom::Start(seq as u64 * CHUNK as u64))
                    .await?;
                let mut data = Vec::with_capacity(CHUNK);
                (&mut whole)
                    .take(CHUNK as u64)
                    .read_to_end(&mut data)
                    .await?;
                return Ok((!data.is_empty()).then_some(data));
            }
            // Stored before the directory was set: its chunks are in the database.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    sqlx::query_scalar("SELECT data FROM file_chunks WHERE file_id = $1 AND seq = $2")
        .bind(file)
        .bind(seq)
        .fetch_optional(db.reader())
        .await
}

fn arriving(dir: &std::path::Path, file: i64) -> std::path::PathBuf {
    dir.join(format!("{file}.part"))
}

fn whole(dir: &std::path::Path, file: i64) -> std::path::PathBuf {
    dir.join(file.to_string())
}

/// Rows of both tables, for tests that check an upload left nothing behind.
pub async fn count_rows(db: &Db) -> Result<(i64, i64), sqlx::Error> {
    let files = sqlx::query_scalar("SELECT COUNT(*) FROM files")
        .fetch_one(db.reader())
        .await?;
    let chunks = sqlx::query_scalar("SELECT COUNT(*) FROM file_chunks")
        .fetch_one(db.reader())
        .await?;
    Ok((files, chunks))
}
