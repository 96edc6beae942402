//! all-MiniLM-L6-v2 in-process: the `tokenizers` word-piece tokenizer and a BERT
//! encoder (6 layers, 384 hidden, 12 heads) written over candle, then the
//! sentence-transformers recipe: mean pooling over the attention mask, L2 normalisation.
//!
//! The encoder is written here rather than taken from candle-transformers: it is a
//! hundred lines, and candle-transformers would compile every other model it ships.
//!
//! Two details decide whether the vectors match the reference:
//! - the shipped `tokenizer.json` pads every input to 128 pieces and truncates at 128;
//!   both are switched off. A lone text is embedded unpadded; a batch is padded to its
//!   longest text with a mask that keeps padding out of attention and out of the mean,
//!   because pooling over padding makes unrelated sentences look alike;
//! - texts are cut to [`MAX_TOKENS`] word pieces (sentence-transformers' window for this
//!   model, `[SEP]` kept last) and the caller is told.

use std::path::Path;

use candle_core::{DType, Device, Module, Storage, Tensor};
use candle_nn::{Embedding as Lookup, LayerNorm, Linear, VarBuilder};
use rayon::prelude::*;
use serde::Deserialize;
use tokenizers::Tokenizer;

use super::{vector, Embedder, Embedding, Error, DIM, MAX_TOKENS};

/// The directory name under `<data dir>/models/` and the id stored with each vector.
pub const MODEL_NAME: &str = "all-minilm-l6-v2";
pub const ID: &str = "all-minilm-l6-v2";

/// Texts per forward pass. Texts are sorted by length first, so a batch pads little.
const BATCH: usize = 16;

/// The fields of `config.json` the encoder needs (Hugging Face BERT config).
#[derive(Debug, Deserialize)]
struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_types")]
    type_vocab_size: usize,
    #[serde(default = "default_eps")]
    layer_norm_eps: f64,
    #[serde(default = "default_act")]
    hidden_act: String,
}

fn default_eps() -> f64 {
    1e-12
}

fn default_types() -> usize {
    2
}

fn default_act() -> String {
    "gelu".into()
}

struct Layer {
    query: Linear,
    key: Linear,
    value: Linear,
    attn_out: Linear,
    attn_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    out_norm: LayerNorm,
}

/// Word pieces (over the whole batch) up to which a product is split over two threads.
const SPLIT_ROWS: usize = 64;

/// Word pieces up to which a product skips the general matrix product altogether.
const FEW_ROWS: usize = 16;

/// `l` applied to `x`.
///
/// A search query is a handful of word pieces. For so few rows the general matrix
/// product spends most of its time repacking the 42 MB of weights into its blocked
/// layout on every call, which also makes it the first thing to slow down when memory
/// is busy. Up to [`FEW_ROWS`] the weights are instead streamed once through
/// [`vector::products`]; up to [`SPLIT_ROWS`] the general product runs. Either way,
/// with a second thread in the pool each thread takes half of the weight rows (half
/// of the output features). Batches of documents, and a pool of one thread
/// (`RAYON_NUM_THREADS=1`), take the general product on one thread.
fn linear(l: &Linear, x: &Tensor) -> candle_core::Result<Tensor> {
    dense(l, x, Then::Nothing)
}

/// What follows a dense layer's product besides its bias.
#[derive(Clone, Copy)]
enum Then<'a> {
    Nothing,
    /// The GELU (erf form) of each output.
    Gelu,
    /// Plus this tensor of the output's shape (a residual connection).
    Add(&'a Tensor),
}

/// `l` applied to `x` (see [`linear`]), then `then`. The bias, the activation and the
/// residual are added here in one pass over the rows, not as candle element-wise ops:
/// on 65,536 elements or more those run on candle's barrier pool, whose one lock and
/// spin-waits serialise the batches [`MiniLm::embed`] runs side by side (profiled:
/// half of the CPU time of a 2-core run went to spinning there).
fn dense(l: &Linear, x: &Tensor, then: Then<'_>) -> candle_core::Result<Tensor> {
    let (b, t, k) = x.dims3()?;
    let rows = b * t;
    let two = rayon::current_num_threads() >= 2;
    let y = 'y: {
        if rows <= FEW_ROWS {
            if let Some(y) = few_rows(l, x, two)? {
                break 'y y;
            }
        }
        let w = l.weight();
        let x2 = x.reshape((rows, k))?;
        let y = if rows > SPLIT_ROWS || !two {
            x2.matmul(&w.t()?)?
        } else {
            let out = w.dim(0)?;
            let half = out / 2;
            let (front, back) = rayon::join(
                || x2.matmul(&w.narrow(0, 0, half)?.t()?),
                || x2.matmul(&w.narrow(0, half, out - half)?.t()?),
            );
            Tensor::cat(&[front?, back?], 1)?
        };
        y.flatten_all()?.to_vec1::<f32>()?
    };
    let out = y.len() / rows.max(1);
    let y = finish(l, y, out, then)?;
    Tensor::from_vec(y, (b, t, out), x.device())
}

/// Adds `l`'s bias to each row of `y` (`out` wide), then does `then`.
fn finish(
    l: &Linear,
    mut y: Vec<f32>,
    out: usize,
    then: Then<'_>,
) -> candle_core::Result<Vec<f32>> {
    let bias = l.bias().map(|b| b.to_vec1::<f32>()).transpose()?;
    let add = match then {
        Then::Add(r) => Some(r.flatten_all()?.to_vec1::<f32>()?),
        _ => None,
    };
    for (i, row) in y.chunks_mut(out.max(1)).enumerate() {
        if let Some(b) = &bias {
            row.iter_mut().zip(b).for_each(|(v, b)| *v += b);
        }
        match (then, &add) {
            (Then::Gelu, _) => row.iter_mut().for_each(|v| {
                *v *= 0.5 * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
            }),
            (Then::Add(_), Some(r)) => row
                .iter_mut()
                .zip(&r[i * out..(i + 1) * out])
                .for_each(|(v, r)| *v += r),
            _ => {}
        }
    }
    Ok(y)
}

/// The error function, as a ratio of two polynomials over [-4, 4] (outside it erf is
/// ±1 to within f32): the form Eigen and XLA use for f32, within 4e-7 of the exact
/// value. libm's `erff` branches on the range and calls `exp`; profiled on short
/// statements it took 14 % of the encoder's CPU, this a fraction of that, and the loop
/// over a row vectorises.
fn erf(x: f32) -> f32 {
    const P: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const Q: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = P[1..].iter().fold(P[0], |acc, c| acc * x2 + c) * x;
    let q = Q[1..].iter().fold(Q[0], |acc, c| acc * x2 + c);
    p / q
}

/// `x·Wᵀ` through [`vector::products`], on two threads when `two`; `None` when the
/// weights are not a plain f32 slab or the CPU lacks the instructions.
fn few_rows(l: &Linear, x: &Tensor, two: bool) -> candle_core::Result<Option<Vec<f32>>> {
    let k = x.dim(2)?;
    let xs = x.flatten_all()?.to_vec1::<f32>()?;
    let (storage, layout) = l.weight().storage_and_layout();
    let (Storage::Cpu(cpu), Some((start, end))) = (&*storage, layout.contiguous_offsets()) else {
        return Ok(None);
    };
    let w = &cpu.as_slice::<f32>()?[start..end];
    let out = w.len() / k.max(1);
    if !two || out < 2 {
        return Ok(vector::products(&xs, w, k));
    }
    let half = out / 2;
    let (front, back) = rayon::join(
        || vector::products(&xs, &w[..half * k], k),
        || vector::products(&xs, &w[half * k..], k),
    );
    let (Some(front), Some(back)) = (front, back) else {
        return Ok(None);
    };
    let rows = xs.len() / k;
    let mut y = Vec::with_capacity(rows * out);
    for r in 0..rows {
        y.extend_from_slice(&front[r * half..(r + 1) * half]);
        y.extend_from_slice(&back[r * (out - half)..(r + 1) * (out - half)]);
    }
    Ok(Some(y))
}

/// The word-piece table: in memory, or read row by row from the weights file.
enum Words {
    Memory(Lookup),
    Disk(WordRows),
}

/// The word-piece embedding table (30,522 × 384 f32, 47 MB, half the weights) left in
/// `model.safetensors`: a text needs only its own few dozen rows, read with `pread`
/// from a handle kept open. The rows read are the same bytes the in-memory table would
/// hold, so vectors are bit-identical; the process keeps 47 MB less resident. The
/// handle pins the file that was loaded: replacing the model (as
/// `scripts/fetch-model.sh` does, by rename) cannot change what is read, and a file
/// cut short in place gives an error, never undefined behaviour as a mapping would.
struct WordRows {
    file: std::fs::File,
    /// Byte offset of row 0 in the file.
    offset: u64,
    rows: usize,
    dim: usize,
}

impl WordRows {
    /// Finds the table in a safetensors file (8-byte little-endian header length, JSON
    /// header, data); `None` when it is not a plain f32 table of `rows` × `dim`, and the
    /// caller keeps the table in memory.
    fn locate(bytes: &[u8], dir: &Path, rows: usize, dim: usize) -> Option<WordRows> {
        let n = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
        let header: serde_json::Value =
            serde_json::from_slice(bytes.get(8..8usize.checked_add(n)?)?).ok()?;
        let t = [
            "embeddings.word_embeddings.weight",
            "bert.embeddings.word_embeddings.weight",
        ]
        .iter()
        .find_map(|k| header.get(*k))?;
        let shape: Vec<u64> = serde_json::from_value(t.get("shape")?.clone()).ok()?;
        let span: Vec<u64> = serde_json::from_value(t.get("data_offsets")?.clone()).ok()?;
        let bytes_needed = (rows * dim * 4) as u64;
        if t.get("dtype")?.as_str()? != "F32"
            || shape != [rows as u64, dim as u64]
            || span.len() != 2
            || span[1].checked_sub(span[0])? != bytes_needed
        {
            return None;
        }
        let offset = 8 + n as u64 + span[0];
        if offset + bytes_needed > bytes.len() as u64 {
            return None;
        }
        let file = std::fs::File::open(dir.join("model.safetensors")).ok()?;
        Some(WordRows {
            file,
            offset,
            rows,
            dim,
        })
    }

    /// The rows of `ids`, one after another.
    fn lookup(&self, ids: &[u32]) -> std::io::Result<Vec<f32>> {
        use std::os::unix::fs::FileExt;
        let mut out = Vec::with_capacity(ids.len() * self.dim);
        let mut row = vec![0u8; self.dim * 4];
        for &id in ids {
            let id = id as usize;
            if id >= self.rows {
                return Err(std::io::Error::other(format!(
                    "word piece {id} is outside the vocabulary"
                )));
            }
            self.file
                .read_exact_at(&mut row, self.offset + (id * self.dim * 4) as u64)?;
            out.extend(
                row.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            );
        }
        Ok(out)
    }
}

/// The loaded model: tokenizer and encoder weights (about 43 MB of f32 in memory, the
/// word-piece table on disk).
pub struct MiniLm {
    tokenizer: Tokenizer,
    words: Words,
    /// The position table, row after row (512 × 384 f32).
    positions: Vec<f32>,
    /// Row 0 of the token-type table: every input is a single segment.
    segment: Vec<f32>,
    emb_norm: LayerNorm,
    layers: Vec<Layer>,
    heads: usize,
    head_dim: usize,
    max_positions: usize,
    device: Device,
}

fn load_err(dir: &Path, message: impl std::fmt::Display) -> Error {
    Error::Load {
        dir: dir.to_path_buf(),
        message: message.to_string(),
    }
}

fn compute_err(e: candle_core::Error) -> Error {
    Error::Compute(e.to_string())
}

impl MiniLm {
    /// Reads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`. Any
    /// missing or malformed file is an error (never a panic), so the caller can fall
    /// back to the hashing embedder.
    pub fn load(dir: &Path) -> Result<MiniLm, Error> {
        // A weights file can be damaged in ways the loader does not check; a panic deep
        // in candle must become a fallback, not a dead server.
        match std::panic::catch_unwind(|| Self::load_inner(dir)) {
            Ok(r) => r,
            Err(_) => Err(load_err(
                dir,
                "the model files are corrupt (loader panicked)",
            )),
        }
    }

    fn load_inner(dir: &Path) -> Result<MiniLm, Error> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| load_err(dir, format!("{name}: {e}")))
        };
        let cfg: Config = serde_json::from_slice(&read("config.json")?)
            .map_err(|e| load_err(dir, format!("config.json: {e}")))?;
        if cfg.hidden_size != DIM
            || cfg.num_attention_heads == 0
            || !cfg.hidden_size.is_multiple_of(cfg.num_attention_heads)
            || cfg.max_position_embeddings < MAX_TOKENS
        {
            return Err(load_err(
                dir,
                format!(
                    "config.json describes a model Cairn cannot use (hidden {}, heads {}, positions {}; need hidden {DIM})",
                    cfg.hidden_size, cfg.num_attention_heads, cfg.max_position_embeddings
                ),
            ));
        }
        if cfg.hidden_act != "gelu" {
            return Err(load_err(
                dir,
                format!(
                    "config.json: activation '{}' is not supported",
                    cfg.hidden_act
                ),
            ));
        }

        let mut tokenizer = Tokenizer::from_bytes(read("tokenizer.json")?)
            .map_err(|e| load_err(dir, format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(None)
            .map_err(|e| load_err(dir, format!("tokenizer.json: {e}")))?;

        let device = Device::Cpu;
        // Buffered, not memory-mapped: a file changed under a mapping is undefined
        // behaviour, and the buffer is freed once the tensors are built.
        let weights = read("model.safetensors")?;
        let disk_words = WordRows::locate(&weights, dir, cfg.vocab_size, cfg.hidden_size);
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
            .map_err(|e| load_err(dir, format!("model.safetensors: {e}")))?;
        // Some exports prefix every tensor with the architecture name.
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let w = |e: candle_core::Error| load_err(dir, format!("model.safetensors: {e}"));
        let h = cfg.hidden_size;
        let eps = cfg.layer_norm_eps;
        let e = vb.pp("embeddings");
        let words = match disk_words {
            Some(rows) => Words::Disk(rows),
            None => Words::Memory(
                candle_nn::embedding(cfg.vocab_size, h, e.pp("word_embeddings")).map_err(w)?,
            ),
        };
        let positions =
            candle_nn::embedding(cfg.max_position_embeddings, h, e.pp("position_embeddings"))
                .map_err(w)?;
        let types = e
            .pp("token_type_embeddings")
            .get((cfg.type_vocab_size, h), "weight")
            .map_err(w)?;
        let segment = types.get(0).and_then(|r| r.to_vec1::<f32>()).map_err(w)?;
        let positions = positions
            .embeddings()
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(w)?;
        let emb_norm = candle_nn::layer_norm(h, eps, e.pp("LayerNorm")).map_err(w)?;
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let l = vb.pp(format!("encoder.layer.{i}"));
            let a = l.pp("attention");
            layers.push(Layer {
                query: candle_nn::linear(h, h, a.pp("self.query")).map_err(w)?,
                key: candle_nn::linear(h, h, a.pp("self.key")).map_err(w)?,
                value: candle_nn::linear(h, h, a.pp("self.value")).map_err(w)?,
                attn_out: candle_nn::linear(h, h, a.pp("output.dense")).map_err(w)?,
                attn_norm: candle_nn::layer_norm(h, eps, a.pp("output.LayerNorm")).map_err(w)?,
                intermediate: candle_nn::linear(
                    h,
                    cfg.intermediate_size,
                    l.pp("intermediate.dense"),
                )
                .map_err(w)?,
                output: candle_nn::linear(cfg.intermediate_size, h, l.pp("output.dense"))
                    .map_err(w)?,
                out_norm: candle_nn::layer_norm(h, eps, l.pp("output.LayerNorm")).map_err(w)?,
            });
        }
        let model = MiniLm {
            tokenizer,
            words,
            positions,
            segment,
            emb_norm,
            layers,
            heads: cfg.num_attention_heads,
            head_dim: h / cfg.num_attention_heads,
            max_positions: cfg.max_position_embeddings,
            device,
        };
        // One real pass proves the weights fit together before the model is trusted.
        model
            .embed(&["cairn"])
            .map_err(|e| load_err(dir, format!("test embedding failed: {e}")))?;
        Ok(model)
    }

    /// Word-piece ids with `[CLS]`/`[SEP]`, cut to the window; `true` when cut.
    fn tokenize(&self, text: &str) -> Result<(Vec<u32>, bool), Error> {
        let enc = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| Error::Compute(format!("tokenizer: {e}")))?;
        let mut ids = enc.get_ids().to_vec();
        let window = MAX_TOKENS.min(self.max_positions);
        if ids.len() > window {
            // Keep the beginning and the closing [SEP], as the reference truncation does.
            let sep = ids[ids.len() - 1];
            ids.truncate(window - 1);
            ids.push(sep);
            return Ok((ids, true));
        }
        Ok((ids, false))
    }

    /// Mean-pooled, unnormalised sentence vectors of a batch of tokenized texts.
    fn forward(&self, batch: &[&[u32]]) -> candle_core::Result<Vec<Vec<f32>>> {
        let b = batch.len();
        let t = batch.iter().map(|x| x.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(b * t);
        let mut mask = Vec::with_capacity(b * t);
        for x in batch {
            ids.extend_from_slice(x);
            ids.resize(ids.len() + t - x.len(), 0);
            mask.extend(std::iter::repeat_n(1f32, x.len()));
            mask.resize(mask.len() + t - x.len(), 0.0);
        }
        let h = self.segment.len();
        let mut x = match &self.words {
            Words::Memory(table) => table
                .forward(&Tensor::from_vec(ids, (b, t), &self.device)?)?
                .flatten_all()?
                .to_vec1::<f32>()?,
            Words::Disk(rows) => rows
                .lookup(&ids)
                .map_err(|e| candle_core::Error::Msg(format!("model.safetensors: {e}")))?,
        };
        // Word + position + segment, row by row (see `dense` for why not candle's adds).
        for (i, row) in x.chunks_mut(h).enumerate() {
            let pos = &self.positions[(i % t) * h..(i % t + 1) * h];
            for ((v, p), s) in row.iter_mut().zip(pos).zip(&self.segment) {
                *v += p + s;
            }
        }
        let mut x = self
            .emb_norm
            .forward(&Tensor::from_vec(x, (b, t, h), &self.device)?)?;
        // Additive attention bias: 0 on tokens, a large negative on padding, so softmax
        // gives padding no weight; one row of `t` per text.
        let bias: Vec<f32> = mask.iter().map(|m| (m - 1.0) * 1e4).collect();
        for l in &self.layers {
            x = self.layer(l, &x, &bias)?;
        }
        // Mean over each text's own tokens.
        let x = x.flatten_all()?.to_vec1::<f32>()?;
        Ok(batch
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let n = text.len().clamp(1, t);
                let mut sum = vec![0f32; h];
                for row in x[i * t * h..].chunks(h).take(n) {
                    sum.iter_mut().zip(row).for_each(|(s, v)| *s += v);
                }
                sum.iter_mut().for_each(|s| *s /= n as f32);
                sum
            })
            .collect())
    }

    /// One encoder layer; `bias` is the attention bias, `t` per text.
    fn layer(&self, l: &Layer, x: &Tensor, bias: &[f32]) -> candle_core::Result<Tensor> {
        let (b, t, h) = x.dims3()?;
        let split = |y: Tensor| {
            y.reshape((b, t, self.heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(linear(&l.query, x)?)?;
        let k = split(linear(&l.key, x)?)?;
        let v = split(linear(&l.value, x)?)?;
        let scores = q.matmul(&k.t()?.contiguous()?)?;
        let p = Tensor::from_vec(
            attention(
                scores.flatten_all()?.to_vec1::<f32>()?,
                bias,
                t,
                self.heads,
                self.head_dim,
            ),
            (b, self.heads, t, t),
            x.device(),
        )?;
        let ctx = p
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .reshape((b, t, h))?;
        let x = l
            .attn_norm
            .forward(&dense(&l.attn_out, &ctx, Then::Add(x))?)?;
        let mid = dense(&l.intermediate, &x, Then::Gelu)?;
        l.out_norm.forward(&dense(&l.output, &mid, Then::Add(&x))?)
    }
}

/// Attention weights from raw scores (`[text][head][query][key]`, `t` × `t` per head):
/// scaled by 1/√head_dim, the text's padding bias added, softmax over the keys.
fn attention(mut s: Vec<f32>, bias: &[f32], t: usize, heads: usize, head_dim: usize) -> Vec<f32> {
    let scale = 1.0 / (head_dim as f32).sqrt();
    for (r, row) in s.chunks_mut(t.max(1)).enumerate() {
        let text = r / (heads * t);
        let bias = &bias[text * t..(text + 1) * t];
        let mut max = f32::NEG_INFINITY;
        for (v, b) in row.iter_mut().zip(bias) {
            *v = *v * scale + b;
            max = max.max(*v);
        }
        let mut sum = 0.0;
        for v in row.iter_mut() {
            *v = (*v - max).exp();
            sum += *v;
        }
        row.iter_mut().for_each(|v| *v /= sum);
    }
    s
}

impl Embedder for MiniLm {
    fn id(&self) -> &'static str {
        ID
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Embedding>, Error> {
        let mut toks = Vec::with_capacity(texts.len());
        for t in texts {
            toks.push(self.tokenize(t)?);
        }
        // Similar lengths share a batch, so padding (masked, but still computed) stays
        // small.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| toks[i].0.len());
        // Batches run side by side, one per thread of the pool: a forward pass of a few
        // short texts keeps one core busy in its small products, norms and softmax, so a
        // second core gains most by taking a batch of its own. A call of few texts is cut
        // into one batch per thread.
        let threads = rayon::current_num_threads().max(1);
        let per = BATCH.min(texts.len().div_ceil(threads)).max(1);
        let chunks: Vec<&[usize]> = order.chunks(per).collect();
        let vecs: Vec<Result<Vec<Vec<f32>>, Error>> = chunks
            .par_iter()
            .map(|chunk| {
                let batch: Vec<&[u32]> = chunk.iter().map(|&i| toks[i].0.as_slice()).collect();
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.forward(&batch)))
                    .map_err(|_| Error::Compute("the encoder panicked".into()))?
                    .map_err(compute_err)
            })
            .collect();
        let mut out: Vec<Option<Embedding>> = vec![None; texts.len()];
        for (chunk, vecs) in chunks.iter().zip(vecs) {
            for (&i, mut v) in chunk.iter().zip(vecs?) {
                vector::normalize(&mut v);
                out[i] = Some(Embedding {
                    vector: v,
                    truncated: toks[i].1,
                });
            }
        }
        out.into_iter()
            .map(|e| e.ok_or_else(|| Error::Compute("a text got no vector".into())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    //! These tests need the real model: `scripts/test.sh` fetches it into
    //! `target/test-model` (or set `CAIRN_TEST_MODEL_DIR`).
    use std::path::PathBuf;
    use std::sync::OnceLock;

    use super::*;
    use crate::embed::vector::dot;

    fn model() -> &'static MiniLm {
        static M: OnceLock<MiniLm> = OnceLock::new();
        M.get_or_init(|| {
            let dir = std::env::var_os("CAIRN_TEST_MODEL_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-model"));
            match MiniLm::load(&dir) {
                Ok(m) => m,
                Err(e) => panic!("{e}\nthe tests need the model: run scripts/test.sh (it runs scripts/fetch-model.sh {})", dir.display()),
            }
        })
    }

    fn one(text: &str) -> Embedding {
        model().embed(&[text]).unwrap().remove(0)
    }

    /// First components of sentence-transformers' all-MiniLM-L6-v2 output (the model
    /// card's example; recomputed here with an independent numpy forward pass over the
    /// same files).
    #[test]
    fn matches_the_reference_vectors() {
        let cases: [(&str, [f32; 8]); 2] = [
            (
                "This is an example sentence",
                [
                    0.067657, 0.063496, 0.048713, 0.079305, 0.037448, 0.002653, 0.039375, -0.007098,
                ],
            ),
            (
                "Each sentence is converted",
                [
                    0.086439, 0.102763, 0.005395, 0.002044, -0.009963, 0.025386, 0.049288,
                    -0.030627,
                ],
            ),
        ];
        for (text, want) in cases {
            let got = one(text);
            assert_eq!(got.vector.len(), DIM);
            assert!(!got.truncated);
            for (i, (g, w)) in got.vector.iter().zip(want).enumerate() {
                assert!(
                    (g - w).abs() < 2e-4,
                    "{text}: component {i} is {g}, want {w}"
                );
            }
            assert!((dot(&got.vector, &got.vector) - 1.0).abs() < 1e-4);
        }
    }

    /// The rational erf the GELU uses stays within 1e-6 of libm's on both sides of
    /// the clamp, and is odd.
    #[test]
    fn the_fast_erf_matches_libm() {
        for i in -4000..=4000 {
            let x = i as f32 / 500.0;
            let (got, want) = (erf(x), candle_core::cpu::erf::erf_f32(x));
            assert!((got - want).abs() < 1e-6, "erf({x}) is {got}, want {want}");
            assert_eq!(erf(-x), -got);
        }
    }

    /// The split general product and the plain one agree, on one thread and on two,
    /// on both sides of each row threshold (in an optimised build the few-row path
    /// takes the kernel, which `vector`'s tests check on its own).
    #[test]
    fn a_split_product_equals_the_whole_one() {
        let dev = Device::Cpu;
        let (out, k) = (41, 24);
        let wv: Vec<f32> = (0..out * k)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 70.0)
            .collect();
        let bv: Vec<f32> = (0..out).map(|i| i as f32 / 10.0 - 2.0).collect();
        let l = Linear::new(
            Tensor::from_vec(wv, (out, k), &dev).unwrap(),
            Some(Tensor::from_vec(bv, out, &dev).unwrap()),
        );
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let single = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        for (batch, rows) in [
            (1, 1),
            (1, 7),
            (2, 8),
            (1, FEW_ROWS + 1),
            (3, 9),
            (1, SPLIT_ROWS + 1),
        ] {
            let xv: Vec<f32> = (0..batch * rows * k)
                .map(|i| ((i * 53 % 97) as f32 - 48.0) / 31.0)
                .collect();
            let x = Tensor::from_vec(xv, (batch, rows, k), &dev).unwrap();
            let got = pool.install(|| linear(&l, &x)).unwrap();
            let alone = single.install(|| linear(&l, &x)).unwrap();
            let want = l.forward(&x).unwrap();
            assert_eq!(got.dims(), want.dims());
            assert_eq!(alone.dims(), want.dims());
            let flat = |t: &Tensor| t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
            for (i, (a, b)) in flat(&got).iter().zip(flat(&want)).enumerate() {
                assert!(
                    (a - b).abs() < 1e-4,
                    "{batch}x{rows}: element {i} is {a}, want {b}"
                );
            }
        }
    }

    #[test]
    fn paraphrases_score_far_above_unrelated_sentences() {
        let a = one("The cat sits on the mat.");
        let b = one("A cat is sitting on a rug.");
        let c = one("Quarterly revenue grew by ten percent.");
        let para = dot(&a.vector, &b.vector);
        let unrelated = dot(&a.vector, &c.vector);
        // Reference: 0.769 and -0.027.
        assert!((para - 0.7689).abs() < 1e-3, "paraphrase {para}");
        assert!(unrelated < 0.1, "unrelated {unrelated}");
    }

    #[test]
    fn word_rows_read_from_disk_equal_the_table() {
        let m = model();
        let Words::Disk(rows) = &m.words else {
            panic!("the shipped model's word-piece table should stay on disk")
        };
        let dir = std::env::var_os("CAIRN_TEST_MODEL_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-model"));
        let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu).unwrap();
        let vb = if vb.contains_tensor("embeddings.word_embeddings.weight") {
            vb
        } else {
            vb.pp("bert")
        };
        let table = vb
            .get((rows.rows, rows.dim), "embeddings.word_embeddings.weight")
            .unwrap();
        let ids = [0u32, 101, 102, 2023, rows.rows as u32 - 1];
        let got = rows.lookup(&ids).unwrap();
        for (k, id) in ids.iter().enumerate() {
            let want = table.get(*id as usize).unwrap().to_vec1::<f32>().unwrap();
            assert_eq!(
                &got[k * rows.dim..(k + 1) * rows.dim],
                &want[..],
                "row {id}"
            );
        }
        assert!(rows.lookup(&[rows.rows as u32]).is_err());
    }

    /// The shipped tokenizer.json pads everything to 128 pieces; a query must not be.
    #[test]
    fn regression_tokenizer_json_padding_is_switched_off() {
        let (ids, cut) = model().tokenize("short").unwrap();
        assert_eq!(ids.len(), 3, "[CLS] short [SEP], got {ids:?}");
        assert!(!cut);
    }

    #[test]
    fn a_padded_batch_gives_each_text_its_unpadded_vector() {
        let texts = [
            "short",
            "Retries failed webhook deliveries with exponential backoff and gives up after five attempts",
            "The rate limiter counts requests per client in a sliding window",
        ];
        let batch = model().embed(&texts).unwrap();
        for (t, b) in texts.iter().zip(&batch) {
            let alone = one(t);
            assert!(dot(&alone.vector, &b.vector) > 0.9999, "{t}");
        }
    }

    /// A text's vector is the same alone, among any neighbours and in a call of any
    /// size (one batch, several, several side by side on the pool): batching is for
    /// speed only.
    #[test]
    fn a_vector_does_not_depend_on_its_batch() {
        let who = [
            "The billing service",
            "Our deploy script",
            "The search index",
        ];
        let does = [
            "retries failed requests",
            "moved to PostgreSQL",
            "sends weekly reports every Monday before the standup meeting",
        ];
        let mut texts: Vec<String> = Vec::new();
        for (i, w) in who.iter().enumerate() {
            for (j, d) in does.iter().enumerate() {
                texts.push(format!("{w} {d} (note {i}{j})."));
            }
        }
        texts.push("short".into());
        texts.push("The rate limiter counts requests per client in a sliding window, logging every failure with its request id".into());
        // 44 texts: more than three batches, lengths mixed.
        let texts: Vec<&str> = texts.iter().map(String::as_str).cycle().take(44).collect();
        let alone: Vec<Vec<f32>> = texts.iter().map(|t| one(t).vector).collect();
        for size in [2, 5, 17, 44] {
            for (c, chunk) in texts.chunks(size).enumerate() {
                // Reversed too, so each text meets other neighbours.
                let mut chunk = chunk.to_vec();
                if c % 2 == 1 {
                    chunk.reverse();
                }
                let got = model().embed(&chunk).unwrap();
                for (t, g) in chunk.iter().zip(&got) {
                    let i = texts.iter().position(|x| x == t).unwrap();
                    let worst = g
                        .vector
                        .iter()
                        .zip(&alone[i])
                        .map(|(a, b)| (a - b).abs())
                        .fold(0f32, f32::max);
                    assert!(worst < 1e-5, "calls of {size}: '{t}' moved by {worst}");
                }
            }
        }
    }

    #[test]
    fn long_texts_are_cut_to_the_window_and_say_so() {
        let head = "the parser reads tokens ".repeat(100);
        let a = one(&format!("{head} and then validates the schema"));
        let b = one(&format!("{head} quarterly revenue grew"));
        assert!(a.truncated && b.truncated);
        // Only the first 256 word pieces count, so different tails do not matter.
        assert!(dot(&a.vector, &b.vector) > 0.9999);
        assert!(!one("the parser reads tokens").truncated);
    }
}
