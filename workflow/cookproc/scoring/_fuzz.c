/* fuzzywuzzy 0.18's fuzz.ratio and fuzz.partial_ratio on its pure-Python difflib backend, in C.
 *
 * The paper's scores come from fuzzywuzzy with difflib.SequenceMatcher(None, a, b) (autojunk on,
 * no junk function). This file is a literal transcription of the parts of CPython 3.11's difflib
 * that those two functions use: __chain_b (including the "popular element" heuristic for a second
 * sequence of 200 or more items), find_longest_match (its j2len dynamic programme and tie
 * breaking, and the extension loops, which may grow a match over popular elements),
 * get_matching_blocks (the LIFO queue, the sort, the merge of adjacent blocks, the final dummy
 * block) and ratio(); then fuzzywuzzy's partial_ratio loop over the matching blocks' windows and
 * its rounding (int(round(x)), i.e. round-half-even on the double). Any deviation from the Python
 * would change the paper's numbers; tests/test_metrics.py compares this module with fuzzywuzzy
 * on random and real pairs.
 *
 * Strings are compared by Unicode code point, as Python compares str items.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_UCS4 ch;
    Py_ssize_t pos;
} Item;

/* A SequenceMatcher(None, a, b): b's element -> positions index ("b2j" without the popular
 * elements), and for each position of a the run of b2j that a[i] maps to (-1: none). */
typedef struct {
    const Py_UCS4 *a, *b;
    Py_ssize_t la, lb;
    Py_ssize_t *order;     /* positions of b sorted by (element, position) */
    Py_ssize_t *run_start; /* per distinct element of b: its slice of order (empty when popular) */
    Py_ssize_t *run_end;
    Py_ssize_t *a_run;     /* per position of a: index of its run, or -1 */
    /* find_longest_match's j2len / newj2len dictionaries as two arrays with row stamps. */
    Py_ssize_t *len_prev, *len_cur;
    int64_t *stamp_prev, *stamp_cur;
    int64_t counter;
} Matcher;

typedef struct {
    Py_ssize_t i, j, k;
} Block;

static int compare_items(const void *x, const void *y)
{
    const Item *p = x, *q = y;
    if (p->ch != q->ch)
        return p->ch < q->ch ? -1 : 1;
    return p->pos < q->pos ? -1 : (p->pos > q->pos);
}

static int compare_blocks(const void *x, const void *y)
{
    const Block *p = x, *q = y;
    if (p->i != q->i)
        return p->i < q->i ? -1 : 1;
    if (p->j != q->j)
        return p->j < q->j ? -1 : 1;
    return p->k < q->k ? -1 : (p->k > q->k);
}

static void matcher_free(Matcher *m)
{
    free(m->order);
    free(m->run_start);
    free(m->run_end);
    free(m->a_run);
    free(m->len_prev);
    free(m->len_cur);
    free(m->stamp_prev);
    free(m->stamp_cur);
    memset(m, 0, sizeof(*m));
}

/* SequenceMatcher(None, a, b) with __chain_b. Returns 0, or -1 with MemoryError set. */
static int matcher_init(Matcher *m, const Py_UCS4 *a, Py_ssize_t la, const Py_UCS4 *b, Py_ssize_t lb)
{
    memset(m, 0, sizeof(*m));
    m->a = a;
    m->b = b;
    m->la = la;
    m->lb = lb;
    Py_ssize_t nb = lb > 0 ? lb : 1, na = la > 0 ? la : 1;
    Item *items = malloc(sizeof(Item) * nb);
    Py_UCS4 *keys = malloc(sizeof(Py_UCS4) * nb);
    m->order = malloc(sizeof(Py_ssize_t) * nb);
    m->run_start = malloc(sizeof(Py_ssize_t) * nb);
    m->run_end = malloc(sizeof(Py_ssize_t) * nb);
    m->a_run = malloc(sizeof(Py_ssize_t) * na);
    m->len_prev = malloc(sizeof(Py_ssize_t) * nb);
    m->len_cur = malloc(sizeof(Py_ssize_t) * nb);
    m->stamp_prev = calloc(nb, sizeof(int64_t));
    m->stamp_cur = calloc(nb, sizeof(int64_t));
    if (!items || !keys || !m->order || !m->run_start || !m->run_end || !m->a_run || !m->len_prev ||
        !m->len_cur || !m->stamp_prev || !m->stamp_cur) {
        free(items);
        free(keys);
        matcher_free(m);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t j = 0; j < lb; j++) {
        items[j].ch = b[j];
        items[j].pos = j;
    }
    qsort(items, (size_t)lb, sizeof(Item), compare_items);
    Py_ssize_t n_keys = 0;
    for (Py_ssize_t t = 0; t < lb; t++) {
        m->order[t] = items[t].pos;
        if (t == 0 || items[t].ch != items[t - 1].ch) {
            keys[n_keys] = items[t].ch;
            m->run_start[n_keys] = t;
            n_keys++;
        }
        m->run_end[n_keys - 1] = t + 1;
    }
    /* autojunk: with n >= 200 items, an element occurring more than n // 100 + 1 times is
     * "popular" and removed from b2j. */
    if (lb >= 200) {
        Py_ssize_t ntest = lb / 100 + 1;
        for (Py_ssize_t r = 0; r < n_keys; r++)
            if (m->run_end[r] - m->run_start[r] > ntest)
                m->run_end[r] = m->run_start[r];
    }
    for (Py_ssize_t i = 0; i < la; i++) {
        Py_ssize_t lo = 0, hi = n_keys;
        m->a_run[i] = -1;
        while (lo < hi) {
            Py_ssize_t mid = (lo + hi) / 2;
            if (keys[mid] < a[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n_keys && keys[lo] == a[i] && m->run_end[lo] > m->run_start[lo])
            m->a_run[i] = lo;
    }
    free(items);
    free(keys);
    return 0;
}

static Block find_longest_match(Matcher *m, Py_ssize_t alo, Py_ssize_t ahi, Py_ssize_t blo, Py_ssize_t bhi)
{
    const Py_UCS4 *a = m->a, *b = m->b;
    Py_ssize_t besti = alo, bestj = blo, bestsize = 0;
    /* A stamp no row carries: j2len starts empty. */
    int64_t prev_stamp = ++m->counter;
    for (Py_ssize_t i = alo; i < ahi; i++) {
        int64_t cur_stamp = ++m->counter;
        Py_ssize_t r = m->a_run[i];
        if (r >= 0) {
            for (Py_ssize_t t = m->run_start[r]; t < m->run_end[r]; t++) {
                Py_ssize_t j = m->order[t];
                if (j < blo)
                    continue;
                if (j >= bhi)
                    break;
                Py_ssize_t k = (j > 0 && m->stamp_prev[j - 1] == prev_stamp) ? m->len_prev[j - 1] + 1 : 1;
                m->len_cur[j] = k;
                m->stamp_cur[j] = cur_stamp;
                if (k > bestsize) {
                    besti = i - k + 1;
                    bestj = j - k + 1;
                    bestsize = k;
                }
            }
        }
        Py_ssize_t *swap_len = m->len_prev;
        m->len_prev = m->len_cur;
        m->len_cur = swap_len;
        int64_t *swap_stamp = m->stamp_prev;
        m->stamp_prev = m->stamp_cur;
        m->stamp_cur = swap_stamp;
        prev_stamp = cur_stamp;
    }
    /* No junk function: every element is "not junk", so these loops extend over equal elements,
     * popular ones included; difflib's two junk-only loops never run. */
    while (besti > alo && bestj > blo && a[besti - 1] == b[bestj - 1]) {
        besti--;
        bestj--;
        bestsize++;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a[besti + bestsize] == b[bestj + bestsize])
        bestsize++;
    Block out = {besti, bestj, bestsize};
    return out;
}

/* get_matching_blocks(): merged blocks plus the final (la, lb, 0); *count is set. NULL on
 * MemoryError. */
static Block *matching_blocks(Matcher *m, Py_ssize_t *count)
{
    Py_ssize_t cap = (m->la < m->lb ? m->la : m->lb) + 2;
    /* The queue holds (alo, ahi, blo, bhi); each block found pushes at most two ranges. */
    Py_ssize_t *q = malloc(sizeof(Py_ssize_t) * 4 * (2 * cap + 2));
    Block *blocks = malloc(sizeof(Block) * cap);
    if (!q || !blocks) {
        free(q);
        free(blocks);
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t top = 0, n = 0;
    q[0] = 0;
    q[1] = m->la;
    q[2] = 0;
    q[3] = m->lb;
    top = 1;
    while (top > 0) {
        top--;
        Py_ssize_t alo = q[4 * top], ahi = q[4 * top + 1], blo = q[4 * top + 2], bhi = q[4 * top + 3];
        Block x = find_longest_match(m, alo, ahi, blo, bhi);
        if (x.k) {
            blocks[n++] = x;
            if (alo < x.i && blo < x.j) {
                q[4 * top] = alo;
                q[4 * top + 1] = x.i;
                q[4 * top + 2] = blo;
                q[4 * top + 3] = x.j;
                top++;
            }
            if (x.i + x.k < ahi && x.j + x.k < bhi) {
                q[4 * top] = x.i + x.k;
                q[4 * top + 1] = ahi;
                q[4 * top + 2] = x.j + x.k;
                q[4 * top + 3] = bhi;
                top++;
            }
        }
    }
    free(q);
    qsort(blocks, (size_t)n, sizeof(Block), compare_blocks);
    Py_ssize_t i1 = 0, j1 = 0, k1 = 0, out = 0;
    for (Py_ssize_t t = 0; t < n; t++) {
        Block x = blocks[t];
        if (i1 + k1 == x.i && j1 + k1 == x.j) {
            k1 += x.k;
        } else {
            if (k1) {
                Block y = {i1, j1, k1};
                blocks[out++] = y; /* out <= t: never overwrites an unread block */
            }
            i1 = x.i;
            j1 = x.j;
            k1 = x.k;
        }
    }
    if (k1) {
        Block y = {i1, j1, k1};
        blocks[out++] = y;
    }
    Block last = {m->la, m->lb, 0};
    blocks[out++] = last;
    *count = out;
    return blocks;
}

/* SequenceMatcher(None, a, b).ratio(); -1.0 on MemoryError. */
static double sequence_ratio(const Py_UCS4 *a, Py_ssize_t la, const Py_UCS4 *b, Py_ssize_t lb)
{
    Matcher m;
    if (matcher_init(&m, a, la, b, lb) < 0)
        return -1.0;
    Py_ssize_t n;
    Block *blocks = matching_blocks(&m, &n);
    matcher_free(&m);
    if (!blocks)
        return -1.0;
    Py_ssize_t matches = 0;
    for (Py_ssize_t t = 0; t < n; t++)
        matches += blocks[t].k;
    free(blocks);
    Py_ssize_t length = la + lb;
    return length ? 2.0 * (double)matches / (double)length : 1.0;
}

/* fuzzywuzzy.utils.intr: int(round(x)), round-half-even like Python's round() on a float. */
static long intr(double x)
{
    return (long)nearbyint(x);
}

/* fuzz.ratio on code-point arrays (both non-empty): -1 with MemoryError set on failure. */
static long ratio_score(const Py_UCS4 *c1, Py_ssize_t l1, const Py_UCS4 *c2, Py_ssize_t l2)
{
    double r = sequence_ratio(c1, l1, c2, l2);
    return r < 0 ? -1 : intr(100 * r);
}

/* fuzz.partial_ratio on code-point arrays (both non-empty): -1 with MemoryError set on failure. */
static long partial_score(const Py_UCS4 *c1, Py_ssize_t l1, const Py_UCS4 *c2, Py_ssize_t l2)
{
    /* if len(s1) <= len(s2): shorter = s1, longer = s2; else the other way round. */
    const Py_UCS4 *shorter = l1 <= l2 ? c1 : c2, *longer = l1 <= l2 ? c2 : c1;
    Py_ssize_t ls = l1 <= l2 ? l1 : l2, ll = l1 <= l2 ? l2 : l1;
    Matcher m;
    if (matcher_init(&m, shorter, ls, longer, ll) < 0)
        return -1;
    Py_ssize_t n = 0;
    Block *blocks = matching_blocks(&m, &n);
    matcher_free(&m);
    if (!blocks)
        return -1;
    double best = 0.0;
    long score = -2;
    for (Py_ssize_t t = 0; t < n && score == -2; t++) {
        Py_ssize_t long_start = blocks[t].j - blocks[t].i > 0 ? blocks[t].j - blocks[t].i : 0;
        Py_ssize_t long_end = long_start + ls;
        if (long_end > ll)
            long_end = ll;
        /* A window already scored (another block with the same offset) scores the same. */
        int seen = 0;
        for (Py_ssize_t u = 0; u < t && !seen; u++) {
            Py_ssize_t other = blocks[u].j - blocks[u].i > 0 ? blocks[u].j - blocks[u].i : 0;
            seen = other == long_start;
        }
        if (seen)
            continue;
        double r = sequence_ratio(shorter, ls, longer + long_start, long_end - long_start);
        if (r < 0)
            score = -1;
        else if (r > .995)
            score = 100;
        else if (r > best)
            best = r;
    }
    free(blocks);
    return score == -2 ? intr(100 * best) : score;
}

/* The Python function around a score: argument parsing, then fuzzywuzzy's decorators (equal
 * strings -> 100, then an empty one -> 0), then the score on the strings' code points. */
static PyObject *similarity(PyObject *args, const char *format,
                            long (*score)(const Py_UCS4 *, Py_ssize_t, const Py_UCS4 *, Py_ssize_t))
{
    PyObject *s1, *s2;
    if (!PyArg_ParseTuple(args, format, &s1, &s2))
        return NULL;
    int equal = PyUnicode_Compare(s1, s2);
    if (equal == -1 && PyErr_Occurred())
        return NULL;
    if (equal == 0)
        return PyLong_FromLong(100);
    Py_ssize_t l1 = PyUnicode_GET_LENGTH(s1), l2 = PyUnicode_GET_LENGTH(s2);
    if (l1 == 0 || l2 == 0)
        return PyLong_FromLong(0);
    Py_UCS4 *c1 = PyUnicode_AsUCS4Copy(s1), *c2 = c1 ? PyUnicode_AsUCS4Copy(s2) : NULL;
    long value = c1 && c2 ? score(c1, l1, c2, l2) : -1;
    PyMem_Free(c1);
    PyMem_Free(c2);
    return value < 0 ? NULL : PyLong_FromLong(value);
}

static PyObject *fuzz_ratio(PyObject *self, PyObject *args)
{
    (void)self;
    return similarity(args, "UU:ratio", ratio_score);
}

static PyObject *fuzz_partial_ratio(PyObject *self, PyObject *args)
{
    (void)self;
    return similarity(args, "UU:partial_ratio", partial_score);
}

static PyMethodDef methods[] = {
    {"ratio", fuzz_ratio, METH_VARARGS,
     "ratio(s1, s2) -> int: fuzzywuzzy 0.18 fuzz.ratio (difflib backend)."},
    {"partial_ratio", fuzz_partial_ratio, METH_VARARGS,
     "partial_ratio(s1, s2) -> int: fuzzywuzzy 0.18 fuzz.partial_ratio (difflib backend)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_fuzz",
    "fuzzywuzzy 0.18's ratio and partial_ratio (pure-Python difflib backend), compiled.", -1, methods,
};

PyMODINIT_FUNC PyInit__fuzz(void)
{
    return PyModule_Create(&module);
}
