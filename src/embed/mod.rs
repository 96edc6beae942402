//! Sentence embeddings: one [`Embedder`] trait, the real model (all-MiniLM-L6-v2 run
//! in-process on the CPU, [`minilm`]), a deterministic hashing fallback ([`hashing`]),
//! and the vector helpers search needs ([`vector`]).
//!
//! The model is loaded lazily through [`Lazy`]: a server that never searches never reads
//! the 90 MB of weights. When the model directory is absent or unreadable the hashing
//! embedder runs instead, with a warning on stderr, and [`Embedder::id`] says so, so every
//! stored vector and every search answer can name the embedder that produced it.
//!
//! This module knows no SQL and no MCP: it turns text into vectors and compares them.

pub mod hashing;
pub mod minilm;
pub mod vector;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Dimension of every vector Cairn stores (the model's and the fallback's).
pub const DIM: usize = 384;

/// The model's window in word pieces, including `[CLS]` and `[SEP]`: sentence-transformers
/// uses 256 for this model (`max_seq_length`), although BERT itself could take 512.
pub const MAX_TOKENS: usize = 256;

/// One text's vector: L2-normalised, [`DIM`] components (all zero for a text with no
/// features, which then scores 0 against everything).
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    pub vector: Vec<f32>,
    /// The text was longer than the embedder's window and only its beginning counts.
    pub truncated: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The model directory lacks a file, or a file is not what the model needs.
    #[error("cannot load the model from {dir}: {message}")]
    Load { dir: PathBuf, message: String },
    /// The forward pass or the tokenizer failed on some input.
    #[error("embedding failed: {0}")]
    Compute(String),
}

/// Turns texts into vectors. Implementations are CPU-bound and blocking: async callers
/// run them under `tokio::task::spawn_blocking`.
pub trait Embedder: Send + Sync {
    /// Names the model and its recipe; stored with every vector so that a model change
    /// marks old vectors for re-embedding (`all-minilm-l6-v2`, `hashing-v1`).
    fn id(&self) -> &'static str;

    /// Length of every vector returned.
    fn dim(&self) -> usize {
        DIM
    }

    /// Embeds a batch; the answer has one entry per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Embedding>, Error>;

    /// Embeds one text (a search query).
    fn embed_one(&self, text: &str) -> Result<Embedding, Error> {
        self.embed(&[text])?
            .pop()
            .ok_or_else(|| Error::Compute("the embedder returned no vector".into()))
    }
}

/// Loads the model from `dir`, or falls back to the hashing embedder when it cannot
/// (absent directory, missing or corrupt file). The second value says why the fallback
/// runs, `None` when the model loaded.
pub fn load(dir: &Path) -> (Arc<dyn Embedder>, Option<String>) {
    if !dir.exists() {
        let why = format!(
            "no model at {}: using the built-in hashing embedder (run scripts/fetch-model.sh to install the model)",
            dir.display()
        );
        tracing::warn!("{why}");
        return (Arc::new(hashing::Hashing), Some(why));
    }
    let started = std::time::Instant::now();
    match minilm::MiniLm::load(dir) {
        Ok(m) => {
            tracing::info!(dir = %dir.display(), ms = started.elapsed().as_millis() as u64, "embedding model loaded");
            (Arc::new(m), None)
        }
        Err(e) => {
            let why = format!("{e}: using the built-in hashing embedder");
            tracing::warn!("{why}");
            (Arc::new(hashing::Hashing), Some(why))
        }
    }
}

/// A shared, lazily loaded embedder: the first [`Lazy::get`] loads the model (or picks
/// the fallback); later calls, from any thread, get the same instance.
pub struct Lazy {
    dir: PathBuf,
    cell: OnceLock<(Arc<dyn Embedder>, Option<String>)>,
}

impl Lazy {
    pub fn new(dir: PathBuf) -> Lazy {
        Lazy {
            dir,
            cell: OnceLock::new(),
        }
    }

    /// An already-initialised handle, for tests and for a caller that picked the embedder
    /// itself.
    pub fn with(embedder: Arc<dyn Embedder>) -> Lazy {
        let cell = OnceLock::new();
        let _ = cell.set((embedder, None));
        Lazy {
            dir: PathBuf::new(),
            cell,
        }
    }

    /// The embedder, loading it on first use. Blocking (hundreds of milliseconds the first
    /// time): call it from `spawn_blocking` in async code.
    pub fn get(&self) -> Arc<dyn Embedder> {
        self.cell.get_or_init(|| load(&self.dir)).0.clone()
    }

    /// The id of the embedder if one has been loaded, without loading it: lets a caller
    /// (or a test) tell that a server which never searched never loaded the model.
    pub fn loaded(&self) -> Option<&'static str> {
        self.cell.get().map(|(e, _)| e.id())
    }

    /// Why the fallback runs instead of the model, once loaded; `None` otherwise.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.cell.get().and_then(|(_, why)| why.as_deref())
    }

    /// The directory the model is (or would be) read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// A stable fingerprint of a text (FNV-1a 64, hex), stored with its vector so that a
/// re-index can tell an unchanged text from a changed one without re-embedding it.
pub fn text_hash(text: &str) -> String {
    format!("{:016x}", hashing::fnv1a(0, text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_dir_falls_back_to_hashing() {
        let (e, why) = load(Path::new("/nonexistent/cairn-model"));
        assert_eq!(e.id(), hashing::ID);
        assert!(why.is_some());
    }

    #[test]
    fn corrupt_model_dir_falls_back_to_hashing() {
        let dir = std::env::temp_dir().join(format!("cairn-corrupt-model-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.json"), b"{ not json").unwrap();
        std::fs::write(dir.join("tokenizer.json"), b"garbage").unwrap();
        std::fs::write(dir.join("model.safetensors"), b"garbage").unwrap();
        let (e, why) = load(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(e.id(), hashing::ID);
        assert!(why.unwrap_or_default().contains("cannot load"));
    }

    #[test]
    fn lazy_loads_once_and_only_on_demand() {
        let l = Lazy::new(PathBuf::from("/nonexistent/cairn-model"));
        assert_eq!(l.loaded(), None);
        let a = l.get();
        assert_eq!(l.loaded(), Some(hashing::ID));
        assert!(Arc::ptr_eq(&a, &l.get()));
        assert!(l.fallback_reason().is_some());
    }
}
