//! The kernels themselves, on plain slices, so they can be read (and tested)
//! apart from N-API. Each mirrors a TypeScript function named in its doc.

/// Checks a CSR index: `start` has n+1 non-decreasing offsets ending at `flat.len()`, every entry in `0..n`.
fn check_csr(start: &[i32], flat: &[i32], what: &'static str) -> Result<usize, &'static str> {
    if start.is_empty() || start[0] != 0 || start[start.len() - 1] as usize != flat.len() {
        return Err(what);
    }
    let n = start.len() - 1;
    if start.windows(2).any(|w| w[1] < w[0]) || flat.iter().any(|&x| x < 0 || x as usize >= n) {
        return Err(what);
    }
    Ok(n)
}

/// Successors as CSR, filled in ascending action order like `succs[p].push(i)`,
/// and each action's count of predecessors.
struct Successors {
    start: Vec<u32>,
    succs: Vec<u32>,
    pending: Vec<u32>,
}

/// `start`/`preds` must have passed `check_csr`.
fn successors(start: &[i32], preds: &[i32]) -> Successors {
    let n = start.len() - 1;
    let mut succ_start = vec![0u32; n + 1];
    for &p in preds {
        succ_start[p as usize + 1] += 1;
    }
    for i in 0..n {
        succ_start[i + 1] += succ_start[i];
    }
    let mut fill: Vec<u32> = succ_start[..n].to_vec();
    let mut succs = vec![0u32; preds.len()];
    let mut pending = vec![0u32; n];
    // SAFETY: check_csr proved start is n+1 non-decreasing offsets within preds and every pred < n;
    // fill[p] stays below succ_start[p + 1] <= preds.len().
    unsafe {
        for i in 0..n {
            let (lo, hi) = (*start.get_unchecked(i) as usize, *start.get_unchecked(i + 1) as usize);
            *pending.get_unchecked_mut(i) = (hi - lo) as u32;
            for &p in preds.get_unchecked(lo..hi) {
                let slot = fill.get_unchecked_mut(p as usize);
                *succs.get_unchecked_mut(*slot as usize) = i as u32;
                *slot += 1;
            }
        }
    }
    Successors { start: succ_start, succs, pending }
}

/// `dependencyEdges`' ordering (@car/ir dag.ts): Kahn's algorithm with a FIFO
/// queue seeded in declaration order, successors in declaration order, and
/// `level[i]` the longest chain ending at `i`. Returns how many were ordered
/// (fewer than n means a cycle).
pub fn levels(start: &[i32], preds: &[i32], order: &mut [i32], level: &mut [i32]) -> Result<usize, &'static str> {
    let n = check_csr(start, preds, "levels: predStart/preds are not a valid index")?;
    if order.len() != n || level.len() != n {
        return Err("levels: order and level must hold one entry per action");
    }
    let Successors { start: succ_start, succs, mut pending } = successors(start, preds);
    level.fill(0);
    let mut tail = 0;
    for i in 0..n {
        if pending[i] == 0 {
            order[tail] = i as i32;
            tail += 1;
        }
    }
    let mut head = 0;
    // SAFETY: succs holds indices < n within succ_start's runs; each action reaches pending 0
    // once (one decrement per predecessor entry), so order gets at most n entries.
    unsafe {
        while head < tail {
            let i = *order.get_unchecked(head) as usize;
            head += 1;
            let next = *level.get_unchecked(i) + 1;
            for &s in succs.get_unchecked(*succ_start.get_unchecked(i) as usize..*succ_start.get_unchecked(i + 1) as usize) {
                let s = s as usize;
                let l = level.get_unchecked_mut(s);
                if *l < next {
                    *l = next;
                }
                let left = pending.get_unchecked_mut(s);
                *left -= 1;
                if *left == 0 {
                    *order.get_unchecked_mut(tail) = s as i32;
                    tail += 1;
                }
            }
        }
    }
    Ok(tail)
}

const CHUNK_WORDS: usize = 32;
const CHUNK_SOURCES: usize = CHUNK_WORDS * 32;

/// Per position in `ReachIndex::labels`: level, depth-first rank, height, search stamp.
const LABEL_WORDS: usize = 4;
const LEVEL: usize = 0;
const RANK: usize = 1;
const HEIGHT: usize = 2;
const STAMP: usize = 3;

/// `reachIndex` (@car/verify reach-index.ts): the graph renamed to
/// topological positions, predecessors and successors as CSR over positions
/// (successors ascending), and per position the packed labels.
struct ReachIndex {
    pred_start: Vec<u32>,
    preds: Vec<u32>,
    succ_start: Vec<u32>,
    succs: Vec<u32>,
    labels: Vec<i32>,
}

/// `start`/`preds` must have passed `check_csr`, `pos` be the inverse of the
/// topological `order`; `level` is indexed by action.
fn reach_index(start: &[i32], preds: &[i32], order: &[i32], level: &[i32], pos: &[u32]) -> ReachIndex {
    let n = order.len();
    let mut pred_start = vec![0u32; n + 1];
    let mut pred_pos = vec![0u32; preds.len()];
    let mut succ_start = vec![0u32; n + 1];
    let mut e = 0;
    for (p, &i) in order.iter().enumerate() {
        for &j in &preds[start[i as usize] as usize..start[i as usize + 1] as usize] {
            let q = pos[j as usize];
            pred_pos[e] = q;
            succ_start[q as usize + 1] += 1;
            e += 1;
        }
        pred_start[p + 1] = e as u32;
    }
    for p in 0..n {
        succ_start[p + 1] += succ_start[p];
    }
    let mut fill: Vec<u32> = succ_start[..n].to_vec();
    let mut succs = vec![0u32; pred_pos.len()];
    for p in 0..n {
        for &q in &pred_pos[pred_start[p] as usize..pred_start[p + 1] as usize] {
            succs[fill[q as usize] as usize] = p as u32;
            fill[q as usize] += 1;
        }
    }
    let mut labels = vec![0i32; LABEL_WORDS * n];
    for (p, &i) in order.iter().enumerate() {
        labels[LABEL_WORDS * p + LEVEL] = level[i as usize];
    }
    // Depth-first ranks: Kahn's algorithm with a stack, sources and successors pushed in ascending position.
    let mut pending: Vec<u32> = (0..n).map(|p| pred_start[p + 1] - pred_start[p]).collect();
    let mut stack: Vec<u32> = (0..n as u32).filter(|&p| pending[p as usize] == 0).collect();
    let mut rank = 0;
    while let Some(p) = stack.pop() {
        labels[LABEL_WORDS * p as usize + RANK] = rank;
        rank += 1;
        for &s in &succs[succ_start[p as usize] as usize..succ_start[p as usize + 1] as usize] {
            pending[s as usize] -= 1;
            if pending[s as usize] == 0 {
                stack.push(s);
            }
        }
    }
    // Heights from the sinks up: a position's successors all come later.
    for p in (0..n).rev() {
        let up = labels[LABEL_WORDS * p + HEIGHT] + 1;
        for &q in &pred_pos[pred_start[p] as usize..pred_start[p + 1] as usize] {
            let at = LABEL_WORDS * q as usize + HEIGHT;
            if labels[at] < up {
                labels[at] = up;
            }
        }
    }
    ReachIndex { pred_start, preds: pred_pos, succ_start, succs, labels }
}

enum Found {
    No,
    Yes,
    GaveUp,
}

/// `search` (@car/verify reach.ts): whether position `u` reaches position
/// `v` (u < v), breadth-first from both ends, growing the smaller frontier,
/// visiting only nodes whose labels lie strictly between the ends'; gives up
/// after `budget` edges. `fq`/`bq` hold at least min(budget, n) + 1 entries.
fn search(index: &mut ReachIndex, u: usize, v: usize, forward: i32, backward: i32, budget: u64, fq: &mut [u32], bq: &mut [u32]) -> Found {
    let ReachIndex { pred_start, preds, succ_start, succs, labels } = index;
    let (level_u, rank_u, height_u) = (labels[LABEL_WORDS * u + LEVEL], labels[LABEL_WORDS * u + RANK], labels[LABEL_WORDS * u + HEIGHT]);
    let (level_v, rank_v, height_v) = (labels[LABEL_WORDS * v + LEVEL], labels[LABEL_WORDS * v + RANK], labels[LABEL_WORDS * v + HEIGHT]);
    labels[LABEL_WORDS * u + STAMP] = forward;
    labels[LABEL_WORDS * v + STAMP] = backward;
    fq[0] = u as u32;
    bq[0] = v as u32;
    let (mut f_head, mut f_tail, mut b_head, mut b_tail) = (0, 1, 0, 1);
    let mut work = 0u64;
    // SAFETY: reach_index built both CSRs over positions < n with n + 1 offsets each and
    // LABEL_WORDS labels per position; u, v < n. A queue gets one entry per edge scanned
    // (at most budget) and per position (at most n - 1 besides its start), within its
    // min(budget, n) + 1 entries.
    unsafe {
        while f_head < f_tail && b_head < b_tail {
            if f_tail - f_head <= b_tail - b_head {
                let x = *fq.get_unchecked(f_head) as usize;
                f_head += 1;
                for &y in succs.get_unchecked(*succ_start.get_unchecked(x) as usize..*succ_start.get_unchecked(x + 1) as usize) {
                    work += 1;
                    if work > budget {
                        return Found::GaveUp;
                    }
                    let y = y as usize;
                    // Successors are in ascending position: the rest lie past v too.
                    if y >= v {
                        if y == v {
                            return Found::Yes;
                        }
                        break;
                    }
                    let at = labels.get_unchecked_mut(LABEL_WORDS * y..LABEL_WORDS * y + LABEL_WORDS);
                    if at[STAMP] == backward {
                        return Found::Yes;
                    }
                    if at[STAMP] == forward || at[LEVEL] >= level_v || at[RANK] >= rank_v || at[HEIGHT] <= height_v {
                        continue;
                    }
                    at[STAMP] = forward;
                    *fq.get_unchecked_mut(f_tail) = y as u32;
                    f_tail += 1;
                }
            } else {
                let x = *bq.get_unchecked(b_head) as usize;
                b_head += 1;
                for &y in preds.get_unchecked(*pred_start.get_unchecked(x) as usize..*pred_start.get_unchecked(x + 1) as usize) {
                    work += 1;
                    if work > budget {
                        return Found::GaveUp;
                    }
                    let y = y as usize;
                    if y <= u {
                        if y == u {
                            return Found::Yes;
                        }
                        continue;
                    }
                    let at = labels.get_unchecked_mut(LABEL_WORDS * y..LABEL_WORDS * y + LABEL_WORDS);
                    if at[STAMP] == forward {
                        return Found::Yes;
                    }
                    if at[STAMP] == backward || at[LEVEL] <= level_u || at[RANK] <= rank_u || at[HEIGHT] >= height_u {
                        continue;
                    }
                    at[STAMP] = backward;
                    *bq.get_unchecked_mut(b_tail) = y as u32;
                    b_tail += 1;
                }
            }
        }
    }
    Found::No
}

/// `reachBatch` (@car/verify reach.ts), whole: for each query, 1 in
/// `answers[k]` when action `from[k]` reaches action `to[k]` along the
/// dependency edges. The graph comes as @car/ir's `DependencyGraph.flat`:
/// predecessors by declaration index (CSR), a topological `order`, `level`s.
/// Position and labels answer "no" outright; a bidirectional search of at
/// most `budget` edges answers most of the rest; the queries it gave up on
/// are answered by propagating bitsets of 1,024 of their sources at a time
/// along the order, across the slice of it the chunk's queries span.
pub fn reach(start: &[i32], preds: &[i32], order: &[i32], level: &[i32], from: &[i32], to: &[i32], answers: &mut [u8], budget: i32) -> Result<(), &'static str> {
    let n = check_csr(start, preds, "reach: predStart/preds are not a valid index")?;
    let q = from.len();
    if order.len() != n || level.len() != n || to.len() != q || answers.len() != q {
        return Err("reach: order and level need one entry per action; from, to and answers one per query");
    }
    if from.iter().chain(to.iter()).any(|&x| x < 0 || x as usize >= n) {
        return Err("reach: a query names an action outside the graph");
    }
    if budget < 0 {
        return Err("reach: the search budget must not be negative");
    }
    let mut pos = vec![u32::MAX; n];
    for (p, &i) in order.iter().enumerate() {
        if i < 0 || i as usize >= n || pos[i as usize] != u32::MAX {
            return Err("reach: order is not a permutation of the actions");
        }
        pos[i as usize] = p as u32;
    }
    // Each predecessor must come earlier in the order (the search and the sweep rely on it).
    for (p, &i) in order.iter().enumerate() {
        if preds[start[i as usize] as usize..start[i as usize + 1] as usize].iter().any(|&j| pos[j as usize] as usize >= p) {
            return Err("reach: order is not topological");
        }
    }
    answers.fill(0);
    // Position and level need no index.
    let pending: Vec<usize> = (0..q)
        .filter(|&k| {
            let (u, v) = (from[k] as usize, to[k] as usize);
            pos[v] > pos[u] && level[v] > level[u]
        })
        .collect();
    if pending.is_empty() {
        return Ok(());
    }
    let mut index = reach_index(start, preds, order, level, &pos);
    let room = (budget as usize).min(n) + 1;
    let (mut fq, mut bq) = (vec![0u32; room], vec![0u32; room]);
    let mut left: Vec<usize> = Vec::new();
    let mut searches: i32 = 0;
    for k in pending {
        let (u, v) = (pos[from[k] as usize] as usize, pos[to[k] as usize] as usize);
        let labels = &index.labels;
        if labels[LABEL_WORDS * u + RANK] > labels[LABEL_WORDS * v + RANK] || labels[LABEL_WORDS * u + HEIGHT] <= labels[LABEL_WORDS * v + HEIGHT] {
            continue;
        }
        searches += 1;
        match search(&mut index, u, v, 2 * searches - 1, 2 * searches, budget as u64, &mut fq, &mut bq) {
            Found::Yes => answers[k] = 1,
            Found::GaveUp => left.push(k),
            Found::No => {}
        }
    }
    if !left.is_empty() {
        sweep(&index, &pos, from, to, &left, answers);
    }
    Ok(())
}

/// `sweep` (@car/verify reach.ts): answers the queries `left` by bitsets of their sources, chunk by chunk.
fn sweep(index: &ReachIndex, pos: &[u32], from: &[i32], to: &[i32], left: &[usize], answers: &mut [u8]) {
    let n = pos.len();
    let (pred_start, pred_pos) = (&index.pred_start, &index.preds);
    // Queries bucketed by source position (counting sort).
    let mut by_start = vec![0u32; n + 1];
    for &k in left {
        by_start[pos[from[k] as usize] as usize + 1] += 1;
    }
    for i in 0..n {
        by_start[i + 1] += by_start[i];
    }
    let mut fill: Vec<u32> = by_start[..n].to_vec();
    let mut by_source = vec![0u32; left.len()];
    for &k in left {
        let slot = &mut fill[pos[from[k] as usize] as usize];
        by_source[*slot as usize] = k as u32;
        *slot += 1;
    }
    let sources: Vec<usize> = (0..n).filter(|&u| by_start[u + 1] > by_start[u]).collect();

    let mut rows: Vec<[u32; CHUNK_WORDS]> = Vec::new();
    let mut live: Vec<u8> = Vec::new();
    for chunk in sources.chunks(CHUNK_SOURCES) {
        let words = (chunk.len() + 31) / 32;
        let lo = chunk[0];
        let mut hi = lo;
        for &u in chunk {
            for &k in &by_source[by_start[u] as usize..by_start[u + 1] as usize] {
                hi = hi.max(pos[to[k as usize] as usize] as usize);
            }
        }
        let span = hi - lo + 1;
        if rows.len() < span {
            rows.resize(span, [0; CHUNK_WORDS]);
            live.resize(span, 0);
        }
        for row in &mut rows[..span] {
            row[..words].fill(0);
        }
        live[..span].fill(0);
        for (slot, &u) in chunk.iter().enumerate() {
            rows[u - lo][slot >> 5] |= 1 << (slot & 31);
            live[u - lo] = 1;
        }
        for r in 0..span {
            let p = lo + r;
            for &pp in &pred_pos[pred_start[p] as usize..pred_start[p + 1] as usize] {
                let pp = pp as usize;
                if pp < lo || live[pp - lo] == 0 {
                    continue;
                }
                // pp < p: the predecessor's row comes earlier, so both can be borrowed.
                let (before, after) = rows.split_at_mut(r);
                let (dst, src) = (&mut after[0], &before[pp - lo]);
                if words == CHUNK_WORDS {
                    for w in 0..CHUNK_WORDS {
                        dst[w] |= src[w];
                    }
                } else {
                    for w in 0..words {
                        dst[w] |= src[w];
                    }
                }
                live[r] = 1;
            }
        }
        for (slot, &u) in chunk.iter().enumerate() {
            let (word, bit) = (slot >> 5, 1u32 << (slot & 31));
            for &k in &by_source[by_start[u] as usize..by_start[u + 1] as usize] {
                if rows[pos[to[k as usize] as usize] as usize - lo][word] & bit != 0 {
                    answers[k as usize] = 1;
                }
            }
        }
    }
}

/// `groupByKey` (@car/verify pairs.ts) on interned key ids: action indices
/// per key, each group in the order given (a topological order), via a
/// stable counting sort. `group_start` has one slot per key id plus one.
pub fn group(order: &[i32], key_start: &[i32], key_ids: &[i32], group_start: &mut [i32], members: &mut [i32]) -> Result<(), &'static str> {
    if group_start.is_empty() {
        return Err("group: groupStart must hold keyCount + 1 entries");
    }
    let keys = group_start.len() - 1;
    if key_start.is_empty() || key_start[0] != 0 || key_start[key_start.len() - 1] as usize != key_ids.len() || key_start.windows(2).any(|w| w[1] < w[0]) {
        return Err("group: keyStart/keyIds are not a valid index");
    }
    let n = key_start.len() - 1;
    if order.len() != n || members.len() != key_ids.len() {
        return Err("group: order must list every action and members hold one entry per key occurrence");
    }
    if key_ids.iter().any(|&k| k < 0 || k as usize >= keys) {
        return Err("group: a key id is out of range");
    }
    let mut seen = vec![0u64; (n + 63) / 64];
    for &i in order {
        if i < 0 || i as usize >= n {
            return Err("group: order is not a permutation of the actions");
        }
        let (word, bit) = (i as usize >> 6, 1u64 << (i & 63));
        if seen[word] & bit != 0 {
            return Err("group: order is not a permutation of the actions");
        }
        seen[word] |= bit;
    }
    group_start.fill(0);
    for &k in key_ids {
        group_start[k as usize + 1] += 1;
    }
    for k in 0..keys {
        group_start[k + 1] += group_start[k];
    }
    let mut fill: Vec<i32> = group_start[..keys].to_vec();
    // SAFETY: order is a permutation of 0..n and key_start a valid index into key_ids, whose ids are
    // all < keys; each key's slots are filled once per occurrence, so fill[k] < group_start[k + 1] <= members.len().
    unsafe {
        for &i in order {
            let i = i as usize;
            for &k in key_ids.get_unchecked(*key_start.get_unchecked(i) as usize..*key_start.get_unchecked(i + 1) as usize) {
                let slot = fill.get_unchecked_mut(k as usize);
                *members.get_unchecked_mut(*slot as usize) = i as i32;
                *slot += 1;
            }
        }
    }
    Ok(())
}
