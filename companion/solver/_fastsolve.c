/* Fast exact search for the single-waste family of Pyramid rules.
 *
 * The position is compiled in Python (companion/solver/spec.py) into "unified"
 * card slots: table slots 0..nt-1 (pyramid, then reserve) and talon slots
 * nt..nt+nl-1 (waste bottom..top, then stock top..bottom).  A state is the
 * mask of removed slots, the talon pointer (index of the stock top; slots
 * below it form the waste) and the number of recycles used.  The same search
 * is written in Python in companion/solver/core.py; both must stay move for
 * move identical (tests compare them).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;
#define MAXSLOTS 52
#define K_DRAW 0
#define K_RECYCLE 1
#define K_REMOVE 2
#define NONE 255
#define F_STOCK_PLAYABLE 1
#define F_SW_PAIRS 2
#define F_TUTS 4
#define F_TALON_KINGS 8

typedef struct { uint8_t kind, a, b; } Move;

typedef struct {
    int nt, nl, n;
    u64 cover[MAXSLOTS], block[MAXSLOTS], partners[MAXSLOTS];
    int val[MAXSLOTS];
    u64 valmask[16];
    u64 goal, kings, table;
    u64 twin_before[MAXSLOTS]; /* free slots (reserve) of the same value with a lower index */
    int draw, maxrec, flags, pair_sum;
} Spec;

/* ---------------------------------------------------------------- hash set */
typedef struct { u64 *keys; uint8_t *vals; size_t cap, count; } Table;
#define EMPTY (~(u64)0)

static int table_init(Table *t, size_t cap) {
    t->cap = cap; t->count = 0;
    t->keys = malloc(cap * sizeof(u64)); t->vals = malloc(cap);
    if (!t->keys || !t->vals) return -1;
    memset(t->keys, 0xff, cap * sizeof(u64));
    return 0;
}
static void table_free(Table *t) { free(t->keys); free(t->vals); t->keys = NULL; t->vals = NULL; }
static inline size_t hash64(u64 k) { k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL; k ^= k >> 33; return (size_t)k; }
static int table_grow(Table *t) {
    Table n;
    if (table_init(&n, t->cap * 2)) { table_free(&n); return -1; }
    for (size_t i = 0; i < t->cap; i++) if (t->keys[i] != EMPTY) {
        size_t h = hash64(t->keys[i]) & (n.cap - 1);
        while (n.keys[h] != EMPTY) h = (h + 1) & (n.cap - 1);
        n.keys[h] = t->keys[i]; n.vals[h] = t->vals[i]; n.count++;
    }
    table_free(t); *t = n; return 0;
}
/* Returns the slot of key, inserting it (val=0xff) if absent; *fresh tells which. */
static long table_slot(Table *t, u64 key, int *fresh) {
    if (t->count * 2 >= t->cap && table_grow(t)) return -1;
    size_t h = hash64(key) & (t->cap - 1);
    while (t->keys[h] != EMPTY) {
        if (t->keys[h] == key) { *fresh = 0; return (long)h; }
        h = (h + 1) & (t->cap - 1);
    }
    t->keys[h] = key; t->vals[h] = 0xff; t->count++; *fresh = 1; return (long)h;
}

/* ------------------------------------------------------------- the rules */
static inline int popc(u64 x) { return __builtin_popcountll(x); }
static inline int is_rm(u64 rm, int slot) { return (int)((rm >> slot) & 1); }

static inline int normalize(const Spec *s, u64 rm, int ptr) {
    while (ptr < s->nl && is_rm(rm, s->nt + ptr)) ptr++;
    return ptr;
}
static inline int waste_top(const Spec *s, u64 rm, int ptr) {
    for (int j = ptr - 1; j >= 0; j--) if (!is_rm(rm, s->nt + j)) return s->nt + j;
    return -1;
}

/* Available table slots; of interchangeable reserve cards (same value, nothing on or
 * under them) only the first left is offered, which keeps states canonical. */
static inline int available(const Spec *s, u64 rm, int *av) {
    int na = 0;
    for (int i = 0; i < s->nt; i++)
        if (!is_rm(rm, i) && !(s->cover[i] & ~rm) && !(s->twin_before[i] & ~rm)) av[na++] = i;
    return na;
}

/* A goal card none of whose remaining partners can ever meet it. */
static int dead(const Spec *s, u64 rm) {
    u64 todo = s->goal & ~rm & ~s->kings;
    while (todo) {
        int i = __builtin_ctzll(todo); todo &= todo - 1;
        if (!(s->partners[i] & ~rm & ~s->block[i])) return 1;
    }
    return 0;
}

static inline int meets(const Spec *s, int a, int b) {
    return !(a < s->nt && ((s->block[a] >> b) & 1)) && !(b < s->nt && ((s->block[b] >> a) & 1));
}
/* In the last pass a needed waste card can only meet a table card or a card still in the
 * stock: the waste cards above it must go first, those below it come up only after it. */
static int last_pass_dead(const Spec *s, u64 rm, int ptr, int rec) {
    if (s->maxrec < 0 || rec < s->maxrec || ptr == 0) return 0;
    u64 reach = s->table | ((((u64)1 << s->nl) - 1) << s->nt & ~((((u64)1 << ptr) - 1) << s->nt));
    u64 todo = s->goal & ~rm & ~s->kings & ((((u64)1 << ptr) - 1) << s->nt);
    while (todo) {
        int i = __builtin_ctzll(todo); todo &= todo - 1;
        if (!(s->partners[i] & ~rm & reach)) return 1;
    }
    return 0;
}

static inline int pairs(const Spec *s, int a, int b) { return s->val[a] + s->val[b] == s->pair_sum; }

/* Both cards are the last of their values: they can only go together (safe). */
static inline int last_pair(const Spec *s, u64 rm, int a, int b) {
    int va = s->val[a], vb = s->val[b];
    if (va == vb) return popc(s->valmask[va] & ~rm) == 2;
    return popc(s->valmask[va] & ~rm) == 1 && popc(s->valmask[vb] & ~rm) == 1;
}

/* Legal moves in search order; a forced (safe) move is returned alone.
 * optimal: only forced moves that every shortest win also makes. */
static int gen(const Spec *s, u64 rm, int ptr, int rec, int optimal, Move *out) {
    int n = 0, av[MAXSLOTS], na = available(s, rm, av);
    int w = waste_top(s, rm, ptr);
    int st = (ptr < s->nl && (s->flags & F_STOCK_PLAYABLE)) ? s->nt + ptr : -1;
    /* forced: a table king; a talon king (draw 1); the last two of a pair of values */
    for (int k = 0; k < na; k++) {
        int i = av[k];
        if (s->val[i] == s->pair_sum && (!optimal || ((s->goal >> i) & 1))) {
            out[0] = (Move){K_REMOVE, (uint8_t)i, NONE}; return 1;
        }
    }
    if (!optimal && (s->flags & F_TALON_KINGS)) {
        if (w >= 0 && s->val[w] == s->pair_sum) { out[0] = (Move){K_REMOVE, (uint8_t)w, NONE}; return 1; }
        if (st >= 0 && s->val[st] == s->pair_sum) { out[0] = (Move){K_REMOVE, (uint8_t)st, NONE}; return 1; }
    }
    for (int x = 0; x < na; x++) for (int y = x + 1; y < na; y++) {
        int a = av[x], b = av[y];
        if (pairs(s, a, b) && last_pair(s, rm, a, b) &&
            (!optimal || (((s->goal >> a) & 1) && ((s->goal >> b) & 1)))) {
            out[0] = (Move){K_REMOVE, (uint8_t)a, (uint8_t)b}; return 1;
        }
    }
    /* table pairs, bottom rows first (they uncover the most) */
    for (int x = na - 1; x >= 0; x--) for (int y = x - 1; y >= 0; y--)
        if (pairs(s, av[x], av[y])) out[n++] = (Move){K_REMOVE, (uint8_t)av[y], (uint8_t)av[x]};
    if (s->flags & F_TUTS) {
        for (int i = 0; i < s->nt; i++) {
            if (is_rm(rm, i)) continue;
            u64 c = s->cover[i] & ~rm;
            if (popc(c) != 1) continue;
            int x = __builtin_ctzll(c);
            if (!(s->cover[x] & ~rm) && pairs(s, i, x)) out[n++] = (Move){K_REMOVE, (uint8_t)i, (uint8_t)x};
        }
    }
    for (int x = na - 1; x >= 0; x--) {
        if (w >= 0 && pairs(s, av[x], w)) out[n++] = (Move){K_REMOVE, (uint8_t)av[x], (uint8_t)w};
        if (st >= 0 && pairs(s, av[x], st)) out[n++] = (Move){K_REMOVE, (uint8_t)av[x], (uint8_t)st};
    }
    if (w >= 0 && st >= 0 && (s->flags & F_SW_PAIRS) && pairs(s, w, st))
        out[n++] = (Move){K_REMOVE, (uint8_t)w, (uint8_t)st};
    if (w >= 0 && s->val[w] == s->pair_sum) out[n++] = (Move){K_REMOVE, (uint8_t)w, NONE};
    if (st >= 0 && s->val[st] == s->pair_sum) out[n++] = (Move){K_REMOVE, (uint8_t)st, NONE};
    if (ptr < s->nl) out[n++] = (Move){K_DRAW, NONE, NONE};
    else if (w >= 0 && (s->maxrec < 0 || rec < s->maxrec)) out[n++] = (Move){K_RECYCLE, NONE, NONE};
    return n;
}

static void apply(const Spec *s, Move m, u64 *rm, int *ptr, int *rec) {
    if (m.kind == K_REMOVE) {
        *rm |= (u64)1 << m.a;
        if (m.b != NONE) *rm |= (u64)1 << m.b;
        *ptr = normalize(s, *rm, *ptr);
    } else if (m.kind == K_DRAW) {
        int p = *ptr, c = 0;
        while (p < s->nl && c < s->draw) { if (!is_rm(*rm, s->nt + p)) c++; p++; }
        *ptr = normalize(s, *rm, p);
    } else {
        *ptr = normalize(s, *rm, 0);
        if (s->maxrec >= 0) (*rec)++;
    }
}

static inline u64 state_key(u64 rm, int ptr) { return rm | ((u64)ptr << 52); }

/* ---------------------------------------------------------------- budget */
typedef struct {
    double deadline; long max_states; long states; int aborted; /* 1 time, 2 states, 3 memory */
    u64 best; int best_n; /* the state that removed the most goal cards (for loss reasons) */
} Budget;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static int over(Budget *b) {
    if (b->max_states > 0 && b->states >= b->max_states) { b->aborted = 2; return 1; }
    if ((b->states & 1023) == 0 && now() > b->deadline) { b->aborted = 1; return 1; }
    return 0;
}

/* ------------------------------------------------------------ relaxation */
/* The same game with every talon card always at hand (each used once): if even
 * that cannot clear the goal, nothing can.  A state is the table mask and the
 * counts of talon cards left per value (4 bits each). */
typedef struct { u64 *a, *b; uint8_t *v; size_t cap, count; } Memo2;
static int memo2_init(Memo2 *t, size_t cap) {
    t->cap = cap; t->count = 0;
    t->a = malloc(cap * sizeof(u64)); t->b = malloc(cap * sizeof(u64)); t->v = malloc(cap);
    if (!t->a || !t->b || !t->v) return -1;
    memset(t->a, 0xff, cap * sizeof(u64)); return 0;
}
static void memo2_free(Memo2 *t) { free(t->a); free(t->b); free(t->v); t->a = t->b = NULL; t->v = NULL; }
static inline size_t hash2(u64 a, u64 b) { return hash64(a ^ hash64(b)); }
static int memo2_get(const Memo2 *t, u64 a, u64 b) {
    size_t h = hash2(a, b) & (t->cap - 1);
    while (t->a[h] != EMPTY) {
        if (t->a[h] == a && t->b[h] == b) return t->v[h];
        h = (h + 1) & (t->cap - 1);
    }
    return -1;
}
static int memo2_put(Memo2 *t, u64 a, u64 b, int v) {
    if (t->count * 2 >= t->cap) {
        Memo2 n; if (memo2_init(&n, t->cap * 2)) { memo2_free(&n); return -1; }
        for (size_t i = 0; i < t->cap; i++) if (t->a[i] != EMPTY) {
            size_t h = hash2(t->a[i], t->b[i]) & (n.cap - 1);
            while (n.a[h] != EMPTY) h = (h + 1) & (n.cap - 1);
            n.a[h] = t->a[i]; n.b[h] = t->b[i]; n.v[h] = t->v[i]; n.count++;
        }
        memo2_free(t); *t = n;
    }
    size_t h = hash2(a, b) & (t->cap - 1);
    while (t->a[h] != EMPTY && !(t->a[h] == a && t->b[h] == b)) h = (h + 1) & (t->cap - 1);
    if (t->a[h] == EMPTY) t->count++;
    t->a[h] = a; t->b[h] = b; t->v[h] = (uint8_t)v; return 0;
}
static inline int cnt(u64 c, int v) { return (int)((c >> (4 * v)) & 15); }

static int talon_rest_ok(const Spec *s, u64 c) {
    if (!(s->goal >> s->nt)) return 1; /* talon cards need not go */
    int any = 0;
    for (int v = 1; v < s->pair_sum; v++) {
        int a = cnt(c, v), o = cnt(c, s->pair_sum - v);
        if (a) any = 1;
        if (2 * v == s->pair_sum ? (a & 1) : (a != o)) return 0;
    }
    return !any || (s->flags & F_SW_PAIRS);
}

/* Every move removes a card, so the relaxed game is acyclic and each
 * (table, counts) result can be remembered for the whole solve. */
static int relax_rec(const Spec *s, u64 rm, u64 c, Memo2 *memo, Budget *b) {
    u64 tgoal = s->goal & s->table;
    if ((rm & tgoal) == tgoal) return talon_rest_ok(s, c);
    int r = memo2_get(memo, rm, c);
    if (r >= 0) return r;
    b->states++;
    if (over(b)) return -1;
    int av[MAXSLOTS], na = available(s, rm, av);
    r = 0;
    for (int k = 0; k < na; k++)
        if (s->val[av[k]] == s->pair_sum) { r = relax_rec(s, rm | ((u64)1 << av[k]), c, memo, b); goto out; }
    for (int x = na - 1; x >= 0 && !r; x--) for (int y = x - 1; y >= 0 && !r; y--)
        if (pairs(s, av[x], av[y])) r = relax_rec(s, rm | ((u64)1 << av[x]) | ((u64)1 << av[y]), c, memo, b);
    if (!r && (s->flags & F_TUTS)) {
        for (int i = 0; i < s->nt && !r; i++) {
            if (is_rm(rm, i)) continue;
            u64 cv = s->cover[i] & ~rm;
            if (popc(cv) != 1) continue;
            int x = __builtin_ctzll(cv);
            if (!(s->cover[x] & ~rm) && pairs(s, i, x))
                r = relax_rec(s, rm | ((u64)1 << i) | ((u64)1 << x), c, memo, b);
        }
    }
    for (int x = na - 1; x >= 0 && !r; x--) {
        int v = s->pair_sum - s->val[av[x]];
        if (v >= 1 && v <= 13 && cnt(c, v))
            r = relax_rec(s, rm | ((u64)1 << av[x]), c - ((u64)1 << (4 * v)), memo, b);
    }
out:
    if (r >= 0 && memo2_put(memo, rm, c, r)) { b->aborted = 3; return -1; }
    return r;
}

/* 1 feasible, 0 proven impossible, -1 budget */
static int relax(const Spec *s, u64 rm, Memo2 *memo, Budget *b) {
    u64 c = 0;
    for (int j = 0; j < s->nl; j++)
        if (!is_rm(rm, s->nt + j)) c += (u64)1 << (4 * s->val[s->nt + j]);
    return relax_rec(s, rm & s->table, c, memo, b);
}

/* ------------------------------------------------------------------- DFS */
#define MAXMOVES 400
typedef struct { u64 rm; int ptr, rec, n, i; Move mv[MAXMOVES]; } Frame;

/* Returns 1 win (path in *path, length *plen), 0 no win, -1 aborted. */
static long table_find(const Table *t, u64 key) {
    size_t h = hash64(key) & (t->cap - 1);
    while (t->keys[h] != EMPTY) {
        if (t->keys[h] == key) return (long)h;
        h = (h + 1) & (t->cap - 1);
    }
    return -1;
}

/* Depth-first search over the table ``t`` of visited states (value: recycles used when
 * visited; a later visit with as many or more is a known failure).  ``won`` (optional,
 * for several searches sharing ``t``) holds states proven winnable with up to that many
 * recycles used: after a win the states of its line are moved there from ``t``. */
static int dfs_run(const Spec *s, u64 rm0, int ptr0, int rec0, Budget *b, Memo2 *memo, Table *tp,
                   Table *won, Move **path, int *plen) {
    Table t = *tp;
    int fcap = 256, depth = 0, result = 0;
    Frame *st = malloc(sizeof(Frame) * fcap);
    if (!st) { b->aborted = 3; return -1; }
    /* push root */
    u64 rm = rm0; int ptr = normalize(s, rm0, ptr0), rec = rec0;
    int pushing = 1;
    while (1) {
        if (pushing) {
            pushing = 0;
            if ((rm & s->goal) == s->goal) { result = 1; break; }
            if (won) {
                long w = table_find(won, state_key(rm, ptr));
                if (w >= 0 && won->vals[w] >= rec) { result = 1; break; }
            }
            int fresh; long h = table_slot(&t, state_key(rm, ptr), &fresh);
            if (h < 0) { b->aborted = 3; result = -1; break; }
            int skip = 0;
            if (!fresh && t.vals[h] <= rec) skip = 1;
            else {
                t.vals[h] = (uint8_t)rec; b->states++;
                int got = popc(rm & s->goal);
                if (got > b->best_n) { b->best_n = got; b->best = rm; }
            }
            if (!skip && over(b)) { result = -1; break; }
            if (!skip && (dead(s, rm) || last_pass_dead(s, rm, ptr, rec))) skip = 1;
            if (!skip) {
                int r = relax(s, rm, memo, b);
                if (r < 0) { result = -1; break; }
                if (r == 0) skip = 1;
            }
            if (!skip) {
                if (depth == fcap) {
                    fcap *= 2; Frame *ns = realloc(st, sizeof(Frame) * fcap);
                    if (!ns) { b->aborted = 3; result = -1; break; }
                    st = ns;
                }
                Frame *f = &st[depth++];
                f->rm = rm; f->ptr = ptr; f->rec = rec; f->i = 0;
                f->n = gen(s, rm, ptr, rec, 0, f->mv);
            }
        }
        if (depth == 0) { result = 0; break; }
        Frame *f = &st[depth - 1];
        if (f->i >= f->n) { depth--; continue; }
        Move m = f->mv[f->i++];
        rm = f->rm; ptr = f->ptr; rec = f->rec;
        apply(s, m, &rm, &ptr, &rec);
        pushing = 1;
    }
    if (result == 1 && path) {
        *plen = depth;
        *path = malloc(sizeof(Move) * (depth + 1));
        for (int d = 0; d < depth; d++) (*path)[d] = st[d].mv[st[d].i - 1];
    }
    if (result == 1 && won) {
        for (int d = 0; d < depth; d++) {
            u64 key = state_key(st[d].rm, st[d].ptr);
            long h = table_find(&t, key);
            if (h >= 0) t.vals[h] = 0xff; /* no longer a known failure */
            int fresh; long w = table_slot(won, key, &fresh);
            if (w < 0) { b->aborted = 3; result = -1; break; }
            if (fresh || won->vals[w] == 0xff || won->vals[w] < st[d].rec) won->vals[w] = (uint8_t)st[d].rec;
        }
    }
    free(st);
    *tp = t;
    return result;
}

static int dfs(const Spec *s, u64 rm0, int ptr0, int rec0, Budget *b, Memo2 *memo, Move **path, int *plen) {
    Table t;
    if (table_init(&t, 1 << 12)) { table_free(&t); b->aborted = 3; return -1; }
    int r = dfs_run(s, rm0, ptr0, rec0, b, memo, &t, NULL, path, plen);
    table_free(&t);
    return r;
}

/* -------------------------------------------------------------------- A* */
typedef struct { u64 key; int32_t parent; uint16_t g; uint8_t rec, closed, h; Move m; } Node;
typedef struct { int32_t *v; int n, cap; } Bucket;

/* Most goal-goal pairs of values v and pair_sum-v that can meet (a card never meets
 * one lying on or under it): a maximum matching of at most 4+4 cards. */
static int match_try(const int *adj, int a, u64 *seen, int *owner) {
    for (int b = 0; b < 4; b++) {
        if (!((adj[a] >> b) & 1) || ((*seen >> b) & 1)) continue;
        *seen |= (u64)1 << b;
        if (owner[b] < 0 || match_try(adj, owner[b], seen, owner)) { owner[b] = a; return 1; }
    }
    return 0;
}
static int goal_pairs(const Spec *s, u64 left, int v) {
    int A[4], B[4], na = 0, nb = 0, w = s->pair_sum - v;
    u64 x = s->valmask[v] & left;
    while (x && na < 4) { A[na++] = __builtin_ctzll(x); x &= x - 1; }
    if (w == v) { /* Spanish sixes: pairs within one group of at most 4 */
        int best = 0;
        for (int i = 0; i < na; i++) for (int j = i + 1; j < na; j++) {
            if (!meets(s, A[i], A[j])) continue;
            int one = 1;
            for (int k = 0; k < na; k++) for (int l = k + 1; l < na; l++)
                if (k != i && k != j && l != i && l != j && meets(s, A[k], A[l])) one = 2;
            if (one > best) best = one;
        }
        return best;
    }
    x = s->valmask[w] & left;
    while (x && nb < 4) { B[nb++] = __builtin_ctzll(x); x &= x - 1; }
    int adj[4] = {0, 0, 0, 0}, owner[4] = {-1, -1, -1, -1}, m = 0;
    for (int i = 0; i < na; i++) for (int j = 0; j < nb; j++) if (meets(s, A[i], B[j])) adj[i] |= 1 << j;
    for (int i = 0; i < na; i++) { u64 seen = 0; m += match_try(adj, i, &seen, owner); }
    return m;
}

/* Lower bound on the steps left: removals of goal cards (kings alone, at most
 * as many goal-goal pairs as the value counts allow) plus the steps that only
 * move the talon (draws, recycles, removals of no goal card) needed to reach a
 * partner of a goal card whose partners all lie in the talon.  Passing a talon
 * card costs half a step when it could go in a talon pair, a whole step when it
 * cannot go at all or only alone, nothing when it can pair with a goal card. */
static int heuristic(const Spec *s, u64 rm, int ptr, int rec) {
    u64 left = s->goal & ~rm;
    int k = popc(left & s->kings), n = popc(left & ~s->kings), p = 0;
    int half = s->pair_sum / 2;
    for (int v = 1; v <= half; v++) p += goal_pairs(s, left, v);
    int h = k + n - p;
    if (s->goal >> s->nt) return h; /* talon cards are goal cards: no separate talon cost */
    u64 tgoal = left & s->table & ~s->kings;
    int c2[32], pre[33];
    pre[0] = 0;
    for (int j = 0; j < s->nl; j++) {
        int slot = s->nt + j;
        if (is_rm(rm, slot)) c2[j] = 0;
        else if (s->partners[slot] & tgoal & ~rm) c2[j] = 0;
        else if ((s->flags & F_SW_PAIRS) && s->val[slot] != s->pair_sum && (s->partners[slot] & ~rm)) c2[j] = 1;
        else c2[j] = 2;
        pre[j + 1] = pre[j] + c2[j];
    }
    int can_recycle = s->maxrec < 0 || rec < s->maxrec;
    int playable = (s->flags & F_STOCK_PLAYABLE) != 0;
    int extra = 0;
    u64 todo = tgoal;
    while (todo) {
        int x = __builtin_ctzll(todo); todo &= todo - 1;
        u64 pr = s->partners[x] & ~rm;
        if (pr & s->table) continue; /* a table partner may do: no talon cost */
        int best = 1 << 20;
        u64 q = pr;
        while (q) {
            int slot = __builtin_ctzll(q); q &= q - 1;
            int j = slot - s->nt, cost;
            if (j >= ptr) {
                cost = (pre[j] - pre[ptr] + 1) / 2 + (playable ? 0 : 1);
            } else {
                cost = (pre[ptr] - pre[j + 1] + 1) / 2; /* dig down the waste */
                if (can_recycle) {
                    int via = (pre[s->nl] - pre[ptr] + pre[j] + 1) / 2 + 1 + (playable ? 0 : 1);
                    if (via < cost) cost = via;
                }
            }
            if (cost < best) best = cost;
        }
        if (best < (1 << 20) && best > extra) extra = best;
    }
    return h + extra;
}

static int astar(const Spec *s, u64 rm0, int ptr0, int rec0, Budget *b, Memo2 *memo, Move **path, int *plen) {
    size_t ncap = 1 << 14, nn = 0;
    Node *nodes = malloc(sizeof(Node) * ncap);
    size_t hcap = 1 << 15; int32_t *hidx = malloc(sizeof(int32_t) * hcap);
    int nb = 1024; Bucket *bk = calloc(nb, sizeof(Bucket));
    int result = 0, goal_node = -1;
    if (!nodes || !hidx || !bk) { b->aborted = 3; result = -1; goto done; }
    memset(hidx, 0xff, sizeof(int32_t) * hcap);
#define FULLKEY(rm, ptr, rec) (state_key(rm, ptr) | ((u64)(rec) << 57))
    int ptr = normalize(s, rm0, ptr0);
    {
        int f = heuristic(s, rm0, ptr, rec0);
        Node r = {FULLKEY(rm0, ptr, rec0), -1, 0, (uint8_t)rec0, 0, (uint8_t)f, {NONE, NONE, NONE}};
        nodes[nn++] = r;
        size_t h = hash64(r.key) & (hcap - 1); hidx[h] = 0;
        if (f >= nb) f = nb - 1;
        bk[f].v = malloc(sizeof(int32_t) * 16); bk[f].cap = 16; bk[f].v[bk[f].n++] = 0;
    }
    Move mv[MAXMOVES];
    for (int f = 0; f < nb && result == 0; ) {
        if (bk[f].n == 0) { f++; continue; }
        int32_t id = bk[f].v[--bk[f].n];
        Node *nd = &nodes[id];
        if (nd->closed) continue;
        u64 rm = nd->key & (((u64)1 << 52) - 1);
        int p = (int)((nd->key >> 52) & 31), rec = nd->rec, g = nd->g;
        if (g + nd->h != f) continue; /* stale entry */
        nd->closed = 1;
        if ((rm & s->goal) == s->goal) { goal_node = id; result = 1; break; }
        b->states++;
        if (over(b)) { result = -1; break; }
        if (last_pass_dead(s, rm, p, rec)) continue;
        if (nd->m.kind != K_DRAW && nd->m.kind != K_RECYCLE) { /* a draw changes no card: same verdicts */
            if (dead(s, rm)) continue;
            int rr = relax(s, rm, memo, b);
            if (rr < 0) { result = -1; break; }
            if (rr == 0) continue;
        }
        int nm = gen(s, rm, p, rec, 1, mv);
        for (int k = 0; k < nm; k++) {
            u64 r2 = rm; int p2 = p, rec2 = rec;
            apply(s, mv[k], &r2, &p2, &rec2);
            u64 key = FULLKEY(r2, p2, rec2);
            if (nn * 2 >= hcap) { /* grow the index */
                size_t nh = hcap * 2; int32_t *x = malloc(sizeof(int32_t) * nh);
                if (!x) { b->aborted = 3; result = -1; goto done; }
                memset(x, 0xff, sizeof(int32_t) * nh);
                for (size_t q = 0; q < nn; q++) {
                    size_t h = hash64(nodes[q].key) & (nh - 1);
                    while (x[h] >= 0) h = (h + 1) & (nh - 1);
                    x[h] = (int32_t)q;
                }
                free(hidx); hidx = x; hcap = nh;
            }
            /* the same position with fewer recycles used, reached as fast, dominates */
            int dominated = 0;
            for (int r = 0; r < rec2 && !dominated; r++) {
                u64 k2 = FULLKEY(r2, p2, r);
                size_t q = hash64(k2) & (hcap - 1);
                while (hidx[q] >= 0 && nodes[hidx[q]].key != k2) q = (q + 1) & (hcap - 1);
                if (hidx[q] >= 0 && nodes[hidx[q]].g <= g + 1) dominated = 1;
            }
            if (dominated) continue;
            size_t h = hash64(key) & (hcap - 1);
            while (hidx[h] >= 0 && nodes[hidx[h]].key != key) h = (h + 1) & (hcap - 1);
            int32_t cid; int hh;
            if (hidx[h] >= 0) {
                cid = hidx[h];
                if (nodes[cid].g <= g + 1) continue;
                /* a shorter way in: (re)open it -- the bound is admissible, not always consistent */
                nodes[cid].g = (uint16_t)(g + 1); nodes[cid].parent = id; nodes[cid].m = mv[k];
                nodes[cid].closed = 0;
                hh = nodes[cid].h;
            } else {
                if (nn == ncap) {
                    ncap *= 2; Node *x = realloc(nodes, sizeof(Node) * ncap);
                    if (!x) { b->aborted = 3; result = -1; goto done; }
                    nodes = x;
                }
                cid = (int32_t)nn;
                hh = heuristic(s, r2, p2, rec2);
                Node c = {key, id, (uint16_t)(g + 1), (uint8_t)rec2, 0, (uint8_t)hh, mv[k]};
                nodes[nn++] = c; hidx[h] = cid;
            }
            int f2 = g + 1 + hh;
            if (f2 >= nb) f2 = nb - 1;
            Bucket *B = &bk[f2];
            if (B->n == B->cap) {
                int nc = B->cap ? B->cap * 2 : 16; int32_t *x = realloc(B->v, sizeof(int32_t) * nc);
                if (!x) { b->aborted = 3; result = -1; goto done; }
                B->v = x; B->cap = nc;
            }
            B->v[B->n++] = cid;
            nd = &nodes[id];
            if (f2 < f) f = f2; /* an inconsistent bound may reopen below the current f */
        }
    }
    if (result == 1) {
        int len = 0;
        for (int q = goal_node; nodes[q].parent >= 0; q = nodes[q].parent) len++;
        *plen = len; *path = malloc(sizeof(Move) * (len + 1));
        int d = len;
        for (int q = goal_node; nodes[q].parent >= 0; q = nodes[q].parent) (*path)[--d] = nodes[q].m;
    }
done:
    free(nodes); free(hidx);
    if (bk) { for (int i = 0; i < nb; i++) free(bk[i].v); free(bk); }
    return result;
}

/* ----------------------------------------------------------- Python glue */
static int fill_spec(Spec *s, PyObject *tvals, PyObject *covers, PyObject *lvals, u64 goal,
                     int draw, int maxrec, int flags, int pair_sum) {
    Py_ssize_t nt = PyBytes_Size(tvals), nl = PyBytes_Size(lvals);
    if (nt < 0 || nl < 0 || nt + nl > MAXSLOTS || nl > 31 || PyTuple_Size(covers) != nt) {
        PyErr_SetString(PyExc_ValueError, "bad spec sizes"); return -1;
    }
    memset(s, 0, sizeof(*s));
    s->nt = (int)nt; s->nl = (int)nl; s->n = (int)(nt + nl);
    const unsigned char *tv = (const unsigned char *)PyBytes_AsString(tvals);
    const unsigned char *lv = (const unsigned char *)PyBytes_AsString(lvals);
    for (int i = 0; i < nt; i++) s->val[i] = tv[i];
    for (int i = 0; i < nl; i++) s->val[nt + i] = lv[i];
    for (int i = 0; i < nt; i++) {
        s->cover[i] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(covers, i));
        if (PyErr_Occurred()) return -1;
    }
    s->table = nt ? (((u64)1 << nt) - 1) : 0;
    s->goal = goal; s->draw = draw; s->maxrec = maxrec; s->flags = flags; s->pair_sum = pair_sum;
    for (int i = 0; i < s->n; i++) {
        if (s->val[i] < 1 || s->val[i] > 13) { PyErr_SetString(PyExc_ValueError, "bad card value"); return -1; }
        s->valmask[s->val[i]] |= (u64)1 << i;
        if (s->val[i] == pair_sum) s->kings |= (u64)1 << i;
    }
    /* cone: every table card that must go before i; computed from the apex down
       needs a fixpoint because the layout order is arbitrary */
    u64 cone[MAXSLOTS];
    for (int i = 0; i < nt; i++) cone[i] = s->cover[i];
    for (int changed = 1; changed; ) {
        changed = 0;
        for (int i = 0; i < nt; i++) {
            u64 c = cone[i], x = cone[i];
            while (x) { int j = __builtin_ctzll(x); x &= x - 1; c |= cone[j]; }
            if (c != cone[i]) { cone[i] = c; changed = 1; }
        }
    }
    for (int i = 0; i < s->n; i++) {
        for (int j = 0; j < s->n; j++)
            if (j != i && s->val[i] + s->val[j] == pair_sum) s->partners[i] |= (u64)1 << j;
    }
    /* a partner lying on i (in its cone) or under it (i in the partner's cone) never meets it;
       with the Tut's Tomb quirk the directly touching cards still can */
    for (int i = 0; i < nt; i++) {
        u64 under = 0, direct_under = 0;
        for (int j = 0; j < nt; j++) {
            if ((cone[j] >> i) & 1) under |= (u64)1 << j;
            if ((s->cover[j] >> i) & 1) direct_under |= (u64)1 << j;
        }
        s->block[i] = (flags & F_TUTS) ? ((cone[i] & ~s->cover[i]) | (under & ~direct_under)) : (cone[i] | under);
    }
    u64 covering = 0;
    for (int i = 0; i < nt; i++) covering |= s->cover[i];
    for (int i = 0; i < nt; i++) {
        if (s->cover[i] || ((covering >> i) & 1)) continue;
        for (int j = 0; j < i; j++)
            if (!s->cover[j] && !((covering >> j) & 1) && s->val[j] == s->val[i] && ((goal >> j) & 1) == ((goal >> i) & 1))
                s->twin_before[i] |= (u64)1 << j;
    }
    return 0;
}

static PyObject *py_solve(PyObject *self, PyObject *args) {
    PyObject *tvals, *covers, *lvals;
    unsigned long long goal, removed;
    int ptr, rec, maxrec, draw, flags, pair_sum, optimal;
    double budget; long max_states;
    if (!PyArg_ParseTuple(args, "SO!SKKiiiiiidli", &tvals, &PyTuple_Type, &covers, &lvals, &goal, &removed,
                          &ptr, &rec, &maxrec, &draw, &flags, &pair_sum, &budget, &max_states, &optimal))
        return NULL;
    Spec s;
    if (fill_spec(&s, tvals, covers, lvals, goal, draw, maxrec, flags, pair_sum)) return NULL;
    if (rec > 63) rec = 63;
    Budget b = {now() + budget, max_states, 0, 0, removed, -1};
    Move *path = NULL; int plen = 0, r;
    Py_BEGIN_ALLOW_THREADS
    Memo2 memo;
    if (memo2_init(&memo, 1 << 12)) { memo2_free(&memo); return PyErr_NoMemory(); }
    r = optimal ? astar(&s, removed, ptr, rec, &b, &memo, &path, &plen)
                : dfs(&s, removed, ptr, rec, &b, &memo, &path, &plen);
    memo2_free(&memo);
    Py_END_ALLOW_THREADS
    PyObject *moves;
    if (r == 1) {
        moves = PyList_New(plen);
        for (int i = 0; i < plen; i++)
            PyList_SET_ITEM(moves, i, Py_BuildValue("(iii)", path[i].kind,
                            path[i].a == NONE ? -1 : path[i].a, path[i].b == NONE ? -1 : path[i].b));
        free(path);
    } else { moves = Py_None; Py_INCREF(moves); }
    return Py_BuildValue("(iNliK)", r, moves, b.states, b.aborted, (unsigned long long)b.best);
}

static PyObject *py_relax(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tvals, *covers, *lvals;
    unsigned long long goal, removed;
    int ptr, rec, maxrec, draw, flags, pair_sum;
    double budget; long max_states;
    if (!PyArg_ParseTuple(args, "SO!SKKiiiiiidl", &tvals, &PyTuple_Type, &covers, &lvals, &goal, &removed,
                          &ptr, &rec, &maxrec, &draw, &flags, &pair_sum, &budget, &max_states))
        return NULL;
    Spec s;
    if (fill_spec(&s, tvals, covers, lvals, goal, draw, maxrec, flags, pair_sum)) return NULL;
    Budget b = {now() + budget, max_states, 0, 0, removed, -1};
    Memo2 memo;
    if (memo2_init(&memo, 1 << 12)) { memo2_free(&memo); return PyErr_NoMemory(); }
    int r = dead(&s, removed) ? 0 : relax(&s, removed, &memo, &b);
    memo2_free(&memo);
    return PyLong_FromLong(r);
}

static PyObject *py_verdicts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tvals, *covers, *lvals, *roots;
    unsigned long long goal, removed;
    int ptr, rec, maxrec, draw, flags, pair_sum;
    double budget; long max_states;
    if (!PyArg_ParseTuple(args, "SO!SKKiiiiiidlO!", &tvals, &PyTuple_Type, &covers, &lvals, &goal, &removed,
                          &ptr, &rec, &maxrec, &draw, &flags, &pair_sum, &budget, &max_states,
                          &PyList_Type, &roots))
        return NULL;
    Spec s;
    if (fill_spec(&s, tvals, covers, lvals, goal, draw, maxrec, flags, pair_sum)) return NULL;
    Py_ssize_t n = PyList_Size(roots);
    Move *mv = malloc(sizeof(Move) * (n + 1));
    int *out = malloc(sizeof(int) * (n + 1));
    if (!mv || !out) { free(mv); free(out); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < n; i++) {
        int k, a, bb;
        if (!PyArg_ParseTuple(PyList_GetItem(roots, i), "iii", &k, &a, &bb)) { free(mv); free(out); return NULL; }
        mv[i] = (Move){(uint8_t)k, (uint8_t)(a < 0 ? NONE : a), (uint8_t)(bb < 0 ? NONE : bb)};
    }
    Budget b = {now() + budget, max_states, 0, 0, removed, -1};
    Memo2 memo = {0}; Table t = {0}, won = {0};
    int ok = !memo2_init(&memo, 1 << 12) && !table_init(&t, 1 << 12) && !table_init(&won, 1 << 8);
    Py_BEGIN_ALLOW_THREADS
    int stop = !ok;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (stop) { out[i] = -1; continue; }
        u64 rm = removed; int p = normalize(&s, removed, ptr), rc = rec;
        apply(&s, mv[i], &rm, &p, &rc);
        out[i] = dfs_run(&s, rm, p, rc, &b, &memo, &t, &won, NULL, NULL);
        if (out[i] < 0) stop = 1; /* the shared tables are no longer exact */
    }
    Py_END_ALLOW_THREADS
    memo2_free(&memo); table_free(&t); table_free(&won);
    PyObject *res = PyList_New(n);
    for (Py_ssize_t i = 0; i < n; i++) PyList_SET_ITEM(res, i, PyLong_FromLong(out[i]));
    free(mv); free(out);
    return Py_BuildValue("(Nl)", res, b.states);
}

static PyMethodDef methods[] = {
    {"verdicts", py_verdicts, METH_VARARGS,
     "verdicts(solve's spec args, budget_seconds, max_states, [(kind, a, b), ...]) -> ([1 win|0|-1], states):"
     " each root move's verdict, the searches sharing their tables"},
    {"relax", py_relax, METH_VARARGS,
     "relax(same as solve without optimal) -> 1 feasible with every talon card at hand, 0 not, -1 budget"},
    {"solve", py_solve, METH_VARARGS,
     "solve(table_vals, covers, talon_vals, goal, removed, ptr, rec, maxrec, draw, flags, pair_sum,"
     " budget_seconds, max_states, optimal) -> (result, moves|None, states, aborted)"},
    {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastsolve", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fastsolve(void) { return PyModule_Create(&module); }
