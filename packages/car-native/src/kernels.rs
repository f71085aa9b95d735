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

/// `reachBatch` (@car/verify reach.ts), whole: for each query, 1 in
/// `answers[k]` when action `from[k]` reaches action `to[k]` along the
/// dependency edges. The graph comes as @car/ir's `DependencyGraph.flat`:
/// predecessors by declaration index (CSR), a topological `order`, `level`s.
/// Level and position answer "no" outright; the rest are answered by
/// propagating bitsets of 1,024 query sources at a time along the order,
/// across the slice of it the chunk's queries span.
pub fn reach(start: &[i32], preds: &[i32], order: &[i32], level: &[i32], from: &[i32], to: &[i32], answers: &mut [u8]) -> Result<(), &'static str> {
    let n = check_csr(start, preds, "reach: predStart/preds are not a valid index")?;
    let q = from.len();
    if order.len() != n || level.len() != n || to.len() != q || answers.len() != q {
        return Err("reach: order and level need one entry per action; from, to and answers one per query");
    }
    if from.iter().chain(to.iter()).any(|&x| x < 0 || x as usize >= n) {
        return Err("reach: a query names an action outside the graph");
    }
    let mut pos = vec![u32::MAX; n];
    for (p, &i) in order.iter().enumerate() {
        if i < 0 || i as usize >= n || pos[i as usize] != u32::MAX {
            return Err("reach: order is not a permutation of the actions");
        }
        pos[i as usize] = p as u32;
    }
    // Predecessors by position; each must come earlier in the order (the sweep relies on it).
    let mut pred_start = vec![0u32; n + 1];
    let mut pred_pos = vec![0u32; preds.len()];
    let mut e = 0;
    for (p, &i) in order.iter().enumerate() {
        for &j in &preds[start[i as usize] as usize..start[i as usize + 1] as usize] {
            let pj = pos[j as usize];
            if pj as usize >= p {
                return Err("reach: order is not topological");
            }
            pred_pos[e] = pj;
            e += 1;
        }
        pred_start[p + 1] = e as u32;
    }
    answers.fill(0);
    let opposite = depth_first_positions(start, preds);
    // Queries left after the O(1) answers (a path raises level and position in
    // both orders), bucketed by source position (counting sort).
    let asks = |k: usize| {
        let (u, v) = (from[k] as usize, to[k] as usize);
        pos[v] > pos[u] && level[v] > level[u] && opposite[v] > opposite[u]
    };
    let mut by_start = vec![0u32; n + 1];
    for k in (0..q).filter(|&k| asks(k)) {
        by_start[pos[from[k] as usize] as usize + 1] += 1;
    }
    for i in 0..n {
        by_start[i + 1] += by_start[i];
    }
    let mut fill: Vec<u32> = by_start[..n].to_vec();
    let mut by_source = vec![0u32; by_start[n] as usize];
    for k in (0..q).filter(|&k| asks(k)) {
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
    Ok(())
}

/// `oppositePositions` (@car/verify topo-orders.ts): positions in the
/// topological order Kahn's algorithm gives with a stack, successors pushed
/// in declaration order. Only called on a graph already known to be acyclic.
fn depth_first_positions(start: &[i32], preds: &[i32]) -> Vec<u32> {
    let n = start.len() - 1;
    let Successors { start: succ_start, succs, mut pending } = successors(start, preds);
    let mut stack: Vec<u32> = (0..n as u32).filter(|&i| pending[i as usize] == 0).collect();
    let mut out = vec![0u32; n];
    let mut p = 0;
    while let Some(node) = stack.pop() {
        out[node as usize] = p;
        p += 1;
        for &s in &succs[succ_start[node as usize] as usize..succ_start[node as usize + 1] as usize] {
            pending[s as usize] -= 1;
            if pending[s as usize] == 0 {
                stack.push(s);
            }
        }
    }
    out
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
