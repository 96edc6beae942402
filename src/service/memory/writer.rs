//! The writer: carries out the memory core's actions in order inside one write transaction.

use super::*;
use crate::domain::field::Tool;

/// Carries out the core's actions in order, keeping a mirror of the atoms it moves
/// so the derived columns (the group an atom competes in) follow.
pub(crate) struct Writer<'a> {
    pub c: &'a mut Conn,
    pub now: String,
    /// Atoms the actions may touch, as they become.
    pub atoms: HashMap<AtomId, MemoryAtom>,
    /// Writes done (rows changed), for the answer.
    pub writes: usize,
    /// A new atom not written yet: its changes go to the mirror only, and
    /// [`Writer::insert_pending`] writes it once, as it ends up, after every other
    /// change (so the key's losers have left ACTIVE before it arrives).
    pub pending: Option<AtomId>,
    /// Why the pending atom's status last moved.
    pending_reason: Option<String>,
    /// Versions of the atoms changed, as the store answered them.
    pub versions: HashMap<AtomId, i64>,
    /// Status changes of one shape waiting to be written as one statement (a
    /// curator pass is mostly thousands of them). Their order matters (the unique
    /// index), so a change of another shape writes them first.
    batch: Option<Batch>,
    /// Confidence and review-date changes, written together at the end of the
    /// actions: they touch columns no other change reads or constrains.
    /// Keyed by atom: the last change of an atom is the one that counts.
    aside: (HashMap<String, f64>, HashMap<String, Option<String>>),
}

/// Consecutive status changes of one shape, written together.
enum Batch {
    Status {
        from: MemoryStatus,
        to: MemoryStatus,
        at: Option<String>,
        rows: Vec<(String, String)>,
    },
}

impl<'a> Writer<'a> {
    pub fn new(c: &'a mut Conn, now: OffsetDateTime) -> Writer<'a> {
        Writer {
            c,
            now: stamp(now),
            atoms: HashMap::new(),
            writes: 0,
            pending: None,
            pending_reason: None,
            versions: HashMap::new(),
            batch: None,
            aside: (HashMap::new(), HashMap::new()),
        }
    }

    /// Writes the status changes waiting in the batch.
    async fn flush_status(&mut self) -> Result<()> {
        let Some(Batch::Status { from, to, at, rows }) = self.batch.take() else {
            return Ok(());
        };
        // A decay already queued for an atom whose status moves goes in the same
        // row write (an aged atom usually has both).
        let rows: Vec<(String, String, Option<f64>)> = rows
            .into_iter()
            .map(|(id, reason)| {
                let c = self.aside.0.remove(&id);
                (id, reason, c)
            })
            .collect();
        let done = store::set_statuses(
            self.c,
            from.as_wire(),
            to.as_wire(),
            at.as_deref(),
            &rows,
            &self.now,
        )
        .await
        .map_err(key_taken)?;
        self.record(done);
        Ok(())
    }

    fn record(&mut self, done: Vec<(String, i64)>) {
        self.writes += done.len();
        for (id, v) in done {
            if let Ok(a) = AtomId::parse(&id) {
                self.versions.insert(a, v);
            }
        }
    }

    /// Writes every change waiting.
    pub async fn flush(&mut self) -> Result<()> {
        self.flush_status().await?;
        let (conf, review) = std::mem::take(&mut self.aside);
        let mut conf: Vec<(String, f64)> = conf.into_iter().collect();
        let mut review: Vec<(String, Option<String>)> = review.into_iter().collect();
        // In id order, so two runs of one plan write alike.
        conf.sort_by(|a, b| a.0.cmp(&b.0));
        review.sort_by(|a, b| a.0.cmp(&b.0));
        if !conf.is_empty() {
            let done = store::set_confidences(self.c, &conf, &self.now).await?;
            self.record(done);
        }
        if !review.is_empty() {
            let done = store::set_next_reviews(self.c, &review, &self.now).await?;
            self.record(done);
        }
        Ok(())
    }

    /// Queues a status change, writing the batch first when its shape differs.
    async fn queue(&mut self, next: Batch) -> Result<()> {
        let same = matches!(
            (&self.batch, &next),
            (Some(Batch::Status { from: a, to: b, at: c, .. }), Batch::Status { from: x, to: y, at: z, .. })
                if a == x && b == y && c == z
        );
        if !same {
            self.flush_status().await?;
            self.batch = Some(next);
            return Ok(());
        }
        if let (Some(Batch::Status { rows, .. }), Batch::Status { rows: more, .. }) =
            (&mut self.batch, next)
        {
            rows.extend(more);
        }
        Ok(())
    }

    /// Writes the pending atom as its changes left it; answers it (at version 1).
    pub async fn insert_pending(&mut self) -> Result<Option<MemoryAtom>> {
        let Some(id) = self.pending.take() else {
            return Ok(None);
        };
        let Some(a) = self.atoms.get(&id).cloned() else {
            return Ok(None);
        };
        self.flush().await?;
        let mut row = atom_to_row(&a, &self.now);
        row.status_reason = self.pending_reason.take();
        store::insert_atom(self.c, &row).await.map_err(key_taken)?;
        self.versions.insert(id, 1);
        self.writes += 1;
        Ok(Some(a))
    }

    /// Makes the writer aware of atoms the actions may touch.
    pub fn know(&mut self, atoms: impl IntoIterator<Item = MemoryAtom>) {
        for a in atoms {
            self.atoms.insert(a.id, a);
        }
    }

    async fn mirror(&mut self, id: AtomId) -> Result<Option<&mut MemoryAtom>> {
        if !self.atoms.contains_key(&id) {
            self.flush().await?;
            if let Some(r) = store::atom(self.c, &id.to_string()).await? {
                let a = atom_from_row(&r)?;
                self.atoms.insert(id, a);
            }
        }
        Ok(self.atoms.get_mut(&id))
    }

    pub async fn actions(&mut self, actions: &[Action]) -> Result<()> {
        for a in actions {
            for c in &a.changes {
                self.change(c, &a.reason).await?;
            }
        }
        self.flush().await
    }

    pub async fn action(&mut self, a: &Action) -> Result<()> {
        for c in &a.changes {
            self.change(c, &a.reason).await?;
        }
        self.flush().await
    }

    async fn atom_change(&mut self, id: AtomId, ch: AtomChange) -> Result<()> {
        if self.pending == Some(id) {
            if let Some(r) = &ch.status_reason {
                self.pending_reason = r.clone();
            }
            return Ok(());
        }
        let v = store::change_atom(self.c, &id.to_string(), None, &ch, &self.now)
            .await
            .map_err(key_taken)?;
        self.versions.insert(id, v);
        self.writes += 1;
        Ok(())
    }

    async fn change(&mut self, c: &Change, reason: &str) -> Result<()> {
        let batched = matches!(
            c,
            Change::SetStatus { .. } | Change::SetConfidence { .. } | Change::SetNextReview { .. }
        );
        if !batched {
            self.flush_status().await?;
        }
        match c {
            Change::MergeSubject {
                from,
                into,
                aliases,
            } => {
                store::set_merged_into(self.c, &from.to_string(), &into.to_string(), &self.now)
                    .await?;
                for a in aliases {
                    store::add_name(
                        self.c,
                        &NameRow {
                            subject_id: into.to_string(),
                            name: a.clone(),
                            norm: normalise_name(a),
                            is_alias: true,
                        },
                    )
                    .await?;
                }
                store::touch_subject(self.c, &into.to_string(), &self.now).await?;
                self.writes += 1;
            }
            Change::MoveAbout { atom, from, to } => {
                let g = match self.mirror(*atom).await? {
                    Some(m) => {
                        m.about = Some(*to);
                        Some(group_key(m))
                    }
                    None => None,
                };
                self.atom_change(
                    *atom,
                    AtomChange {
                        about_id: Some((from.to_string(), to.to_string())),
                        group_key: g,
                        ..Default::default()
                    },
                )
                .await?;
            }
            Change::MoveContext { atom, from, to } => {
                let g = match self.mirror(*atom).await? {
                    Some(m) => {
                        m.context = Context::In(*to);
                        Some(group_key(m))
                    }
                    None => None,
                };
                self.atom_change(
                    *atom,
                    AtomChange {
                        context_id: Some((from.to_string(), to.to_string())),
                        group_key: g,
                        ..Default::default()
                    },
                )
                .await?;
            }
            Change::RepointSubjectField {
                subject,
                field,
                from,
                to,
            } => {
                let (mut s, v) = load_subject(self.c, &subject.to_string()).await?;
                for (f, r) in s.subject_refs_mut() {
                    if f == *field && *r == *from {
                        *r = *to;
                    }
                }
                let row = subject_to_row(&s, v);
                store::set_subject_details(self.c, &row.id, &row.details, &self.now).await?;
                self.writes += 1;
            }
            Change::MoveEdge { from, to } => {
                let f = edge_to_row(from);
                store::delete_edge(self.c, &f.from_id, &f.kind, &f.to_id).await?;
                store::insert_edge(self.c, &edge_to_row(to), &self.now).await?;
                self.writes += 1;
            }
            Change::DropEdge(e) => {
                let f = edge_to_row(e);
                store::delete_edge(self.c, &f.from_id, &f.kind, &f.to_id).await?;
                self.writes += 1;
            }
            Change::AddEdge(e) => {
                store::insert_edge(self.c, &edge_to_row(e), &self.now).await?;
                self.writes += 1;
            }
            Change::SetStatus { atom, from, to, at } => {
                // Never retired before it was recorded (a call's clock may lag).
                let mut at = *at;
                if let Some(m) = self.atoms.get_mut(atom) {
                    m.status = *to;
                    at = at.max(m.recorded_at);
                    if to.is_retired() && m.retired_at.is_none() {
                        m.retired_at = Some(at);
                    }
                }
                if self.pending == Some(*atom) {
                    self.pending_reason = Some(reason.to_string());
                } else {
                    self.queue(Batch::Status {
                        from: *from,
                        to: *to,
                        at: to.is_retired().then(|| stamp(at)),
                        rows: vec![(atom.to_string(), reason.to_string())],
                    })
                    .await?;
                }
            }
            Change::SetDecisionStatus { atom, to, .. } => {
                if let Some(m) = self.atoms.get_mut(atom) {
                    if let crate::domain::memory::model::AtomDetails::Decision(d) = &mut m.details {
                        d.decision_status = *to;
                    }
                }
                self.atom_change(
                    *atom,
                    AtomChange {
                        decision_status: Some(to.as_wire().into()),
                        ..Default::default()
                    },
                )
                .await?;
            }
            Change::SetResolution { atom, text } => {
                if let Some(m) = self.atoms.get_mut(atom) {
                    m.resolution = Some(text.clone());
                }
                self.atom_change(
                    *atom,
                    AtomChange {
                        resolution: Some(text.clone()),
                        ..Default::default()
                    },
                )
                .await?;
            }
            Change::SetClaimKey { atom, to, .. } => {
                if let Some(m) = self.atoms.get_mut(atom) {
                    m.claim_key = to.clone();
                }
                self.atom_change(
                    *atom,
                    AtomChange {
                        claim_key: Some(to.clone()),
                        group_key: to.clone(),
                        ..Default::default()
                    },
                )
                .await?;
            }
            Change::SetNextReview { atom, to, .. } => {
                if let Some(m) = self.atoms.get_mut(atom) {
                    m.next_review_at = *to;
                }
                if self.pending != Some(*atom) {
                    self.aside.1.insert(atom.to_string(), to.map(stamp));
                }
            }
            Change::SetConfidence { atom, to, .. } => {
                if let Some(m) = self.atoms.get_mut(atom) {
                    m.confidence = *to;
                }
                if self.pending != Some(*atom) {
                    self.aside.0.insert(atom.to_string(), *to);
                }
            }
        }
        Ok(())
    }

    /// Review dates for the atoms the actions made ACTIVE that have none, as actions
    /// of their own (the curator's schedule step, applied at once), written.
    pub async fn schedule(&mut self, actions: &[Action]) -> Result<Vec<Action>> {
        let mut activated: Vec<AtomId> = Vec::new();
        for a in actions {
            for c in &a.changes {
                if let Change::SetStatus {
                    atom,
                    to: MemoryStatus::Active,
                    ..
                } = c
                {
                    if !activated.contains(atom) {
                        activated.push(*atom);
                    }
                }
            }
        }
        let mut out = Vec::new();
        for id in activated {
            let Some(a) = self.mirror(id).await?.cloned() else {
                continue;
            };
            if a.status != MemoryStatus::Active || a.next_review_at.is_some() {
                continue;
            }
            let Some(due) = next_review(&a, a.validation_anchor()) else {
                continue;
            };
            out.push(Action {
                kind: ActionKind::ScheduleReview,
                changes: vec![Change::SetNextReview {
                    atom: id,
                    from: None,
                    to: Some(due),
                }],
                reason: format!("{} atoms are reviewed on a schedule", a.atom_type()),
            });
        }
        self.actions(&out).await?;
        Ok(out)
    }
}

/// The unique index refused a second current atom on a key. `BEGIN IMMEDIATE` makes
/// the read that planned the write and the write one step, so this means rows the
/// plan did not see (a damaged file, or a write outside Cairn): nothing is written.
fn key_taken(e: crate::store::Error) -> Error {
    match e {
        crate::store::Error::Duplicate { name, .. } => Error::invariant(format!(
            "another atom is already current on claim key {name}; nothing was written: read the key's atoms \
             ({} list with key) and retry",
            Tool::QueryMemory
        )),
        other => other.into(),
    }
}
