/* tasks.c — the tiny models' data, generated here from a seed (nothing is downloaded or shipped in).
 *
 * copy  A retrieval task where position matters and attention is legible. A sequence is a run of episodes
 *       ". s1 s2 .. sn | s1 s2 .. sn" with n uniform in [1, 16] distinct letters a-z; the next episode's '.'
 *       closes the copy. Scored targets: the n copied letters and the closing '.'. Solving it takes a
 *       previous-token head plus an induction head that finds the most recent earlier occurrence of the
 *       current letter (older episodes hold the same letters, so it must prefer the nearest one) — the
 *       copy-and-induction mechanism of Olsson et al. 2022. Longer sequences hold more episodes: evaluating
 *       at 2x..8x the training length keeps the task the same and only moves it to unseen positions, which is
 *       what the ALiBi paper's "train short, test long" measures.
 * lm    A character-level language model on English-like text from a seeded probabilistic grammar: paragraphs
 *       with a cast of invented names that recur (so context beyond a sentence helps), sentences built from a
 *       small lexicon (determiners, adjectives, nouns, transitive and intransitive verbs, prepositions,
 *       clauses joined by "and", "but", "because", "while", reported speech). Written by this file: no
 *       licence beyond the project's.
 *
 * Everything is deterministic from (seed, index) through splitmix64; no global state.
 */
#include "model_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- splitmix64 ---------------------------------------------------------------------------------- */

uint64_t pe__rng_next(pe__rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

pe__rng pe__rng_seed(uint64_t seed, uint64_t stream) {
    pe__rng r = {seed * 0x9E3779B97F4A7C15ULL ^ (stream + 0x632BE59BD9B4E019ULL) * 0xD1B54A32D192ED03ULL};
    pe__rng_next(&r);
    return r;
}

uint32_t pe__rng_below(pe__rng *r, uint32_t n) {
    /* rejection sampling: unbiased */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = pe__rng_next(r);
    while (x >= lim);
    return (uint32_t)(x % n);
}

double pe__rng_uniform(pe__rng *r) { return (double)(pe__rng_next(r) >> 11) * 0x1p-53; }

double pe__rng_normal(pe__rng *r) {
    double u1 = pe__rng_uniform(r), u2 = pe__rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- copy --------------------------------------------------------------------------------------- */

static const char pe__copy_vocab[] = ".|abcdefghijklmnopqrstuvwxyz";
#define PE__COPY_DOT 0
#define PE__COPY_BAR 1
#define PE__COPY_LETTERS 26
#define PE__COPY_MAX_N 16

static int32_t pe__copy_sample(uint64_t seed, uint64_t index, int32_t len, int32_t *inputs, int32_t *targets) {
    pe__rng r = pe__rng_seed(seed, index);
    /* tokens[0 .. len] (len + 1), scored[0 .. len] marks tokens that are targets */
    int32_t n_tok = 0, n_scored = 0;
    int32_t *tok = inputs; /* write inputs directly; the last token is kept aside */
    /* produce into a small state machine so we never buffer more than an episode */
    int32_t ep[2 * PE__COPY_MAX_N + 2];
    int32_t ep_scored[2 * PE__COPY_MAX_N + 2];
    int first_episode = 1;
    while (n_tok < len + 1) {
        int32_t n = 1 + (int32_t)pe__rng_below(&r, PE__COPY_MAX_N);
        int32_t letters[PE__COPY_LETTERS];
        for (int32_t i = 0; i < PE__COPY_LETTERS; i++) letters[i] = i;
        for (int32_t i = 0; i < n; i++) { /* partial Fisher-Yates: n distinct letters */
            int32_t j = i + (int32_t)pe__rng_below(&r, (uint32_t)(PE__COPY_LETTERS - i));
            int32_t t = letters[i];
            letters[i] = letters[j];
            letters[j] = t;
        }
        int32_t k = 0;
        ep[k] = PE__COPY_DOT;
        ep_scored[k++] = !first_episode; /* '.' closes the previous copy */
        for (int32_t i = 0; i < n; i++) {
            ep[k] = 2 + letters[i];
            ep_scored[k++] = 0;
        }
        ep[k] = PE__COPY_BAR;
        ep_scored[k++] = 0;
        for (int32_t i = 0; i < n; i++) {
            ep[k] = 2 + letters[i];
            ep_scored[k++] = 1;
        }
        first_episode = 0;
        for (int32_t i = 0; i < k && n_tok < len + 1; i++, n_tok++) {
            if (n_tok < len) tok[n_tok] = ep[i];
            if (n_tok >= 1) targets[n_tok - 1] = ep_scored[i] ? ep[i] : -1;
            if (n_tok >= 1 && ep_scored[i]) n_scored++;
        }
    }
    return n_scored;
}

/* ---- lm: a seeded probabilistic grammar ------------------------------------------------------------ */

static const char pe__lm_vocab[] = " abcdefghijklmnopqrstuvwxyz.,\n";

static const char *const pe__nouns[] = {
    "dog",      "cat",     "bird",   "fox",     "horse", "river",  "house",   "garden", "boat",   "lamp",    "book",
    "letter",   "door",    "window", "tree",    "stone", "bridge", "road",    "market", "cup",    "bell",    "coat",
    "apple",    "basket",  "hill",   "field",   "wagon", "candle", "clock",   "song",   "map",    "key",     "box",
    "rope",     "fish",    "cloud",  "storm",   "ship",  "table",  "chair",   "wall",   "gate",   "mill",    "well",
    "forest",   "village", "tower",  "king",    "baker", "farmer", "teacher", "child",  "sister", "brother", "friend",
    "stranger", "doctor",  "sailor", "painter", "girl",  "boy",
};
static const char *const pe__adjs[] = {
    "old",    "small", "big",   "red",    "green",  "quiet",   "bright", "dark",  "cold",    "warm",
    "little", "tall",  "heavy", "broken", "new",    "strange", "happy",  "tired", "brave",   "gentle",
    "wet",    "dry",   "slow",  "quick",  "golden", "silver",  "lonely", "busy",  "careful", "hungry",
};
static const char *const pe__vt[] = {
    /* transitive, past tense */
    "saw",     "found",      "carried", "painted", "opened", "closed", "lost",   "followed", "watched", "fixed",
    "took",    "made",       "washed",  "loved",   "hid",    "sold",   "bought", "pulled",   "pushed",  "cleaned",
    "visited", "remembered", "counted", "dropped", "held",   "kept",   "left",   "met",      "heard",   "called",
};
static const char *const pe__vi[] = {
    /* intransitive, past tense */
    "slept",  "laughed",  "waited", "sang",    "walked", "ran",    "smiled",   "cried",
    "danced", "listened", "rested", "shouted", "worked", "stayed", "returned", "arrived",
};
static const char *const pe__preps[] = {
    "near", "behind", "under", "over", "beside", "inside", "across", "around", "past", "into", "toward", "by",
};
static const char *const pe__times[] = {
    "in the morning", "at night", "after dinner",    "before the rain", "that day",
    "every winter",   "at noon",  "on the next day", "long ago",        "later",
};
static const char *const pe__says[] = {"said", "thought", "knew", "told everyone", "wrote", "whispered"};
static const char *const pe__onsets[] = {
    "b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "sh", "th", "br", "tr", "kl", "st",
};
static const char *const pe__vowels[] = {"a", "e", "i", "o", "u", "a", "e", "o", "ai", "ou"};
static const char *const pe__codas[] = {"", "", "", "n", "r", "l", "s", "k", "m"};

#define PE__N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
#define PE__PICK(r, a) ((a)[pe__rng_below((r), PE__N(a))])

typedef struct pe__text {
    char *p;
    size_t n, cap;
} pe__text;

static void pe__put(pe__text *t, const char *s) {
    while (*s && t->n < t->cap) t->p[t->n++] = *s++;
}

typedef struct pe__para {
    char names[3][16];
    int n_names;
    const char *topic[3]; /* nouns this paragraph returns to */
} pe__para;

static void pe__make_name(pe__rng *r, char *out) {
    int syl = 2 + (int)pe__rng_below(r, 2);
    size_t n = 0;
    for (int s = 0; s < syl; s++) {
        const char *parts[3] = {PE__PICK(r, pe__onsets), PE__PICK(r, pe__vowels),
                                s == syl - 1 ? PE__PICK(r, pe__codas) : ""};
        for (int k = 0; k < 3; k++)
            for (const char *c = parts[k]; *c && n < 15; c++) out[n++] = *c;
    }
    out[n] = 0;
}

static const char *pe__noun(pe__rng *r, const pe__para *pa) {
    return pe__rng_below(r, 3) == 0 ? pa->topic[pe__rng_below(r, 3)] : PE__PICK(r, pe__nouns);
}

/* NP: a name, or a determiner, maybe an adjective, a noun. */
static void pe__np(pe__rng *r, pe__text *t, const pe__para *pa, int allow_name) {
    if (allow_name && pe__rng_below(r, 5) < 2) {
        pe__put(t, pa->names[pe__rng_below(r, (uint32_t)pa->n_names)]);
        return;
    }
    uint32_t d = pe__rng_below(r, 6);
    const char *adj = pe__rng_below(r, 2) ? PE__PICK(r, pe__adjs) : NULL;
    const char *noun = pe__noun(r, pa);
    const char *first = adj ? adj : noun;
    const int vowel = strchr("aeiou", first[0]) != NULL;
    pe__put(t, d < 3 ? "the " : d < 4 ? (vowel ? "an " : "a ") : d < 5 ? "her " : "his ");
    if (adj) {
        pe__put(t, adj);
        pe__put(t, " ");
    }
    pe__put(t, noun);
}

static void pe__clause(pe__rng *r, pe__text *t, const pe__para *pa, int depth);

static void pe__vp(pe__rng *r, pe__text *t, const pe__para *pa, int depth) {
    uint32_t k = pe__rng_below(r, depth < 1 ? 10 : 8);
    if (k < 4) {
        pe__put(t, PE__PICK(r, pe__vt));
        pe__put(t, " ");
        pe__np(r, t, pa, 1);
    } else if (k < 6) {
        pe__put(t, PE__PICK(r, pe__vi));
    } else if (k < 8) {
        pe__put(t, pe__rng_below(r, 2) ? "went " : "looked ");
        pe__put(t, PE__PICK(r, pe__preps));
        pe__put(t, " ");
        pe__np(r, t, pa, 0);
    } else {
        pe__put(t, PE__PICK(r, pe__says));
        pe__put(t, " that ");
        pe__clause(r, t, pa, depth + 1);
    }
    if (pe__rng_below(r, 5) == 0) {
        pe__put(t, " ");
        pe__put(t, PE__PICK(r, pe__preps));
        pe__put(t, " ");
        pe__np(r, t, pa, 0);
    }
}

static void pe__clause(pe__rng *r, pe__text *t, const pe__para *pa, int depth) {
    pe__np(r, t, pa, 1);
    pe__put(t, " ");
    pe__vp(r, t, pa, depth);
}

static void pe__sentence(pe__rng *r, pe__text *t, const pe__para *pa) {
    uint32_t k = pe__rng_below(r, 10);
    if (k == 0) {
        pe__put(t, PE__PICK(r, pe__times));
        pe__put(t, ", ");
    } else if (k == 1) {
        pe__put(t, "when ");
        pe__clause(r, t, pa, 1);
        pe__put(t, ", ");
    }
    pe__clause(r, t, pa, 0);
    uint32_t j = pe__rng_below(r, 8);
    if (j < 3) {
        static const char *const conj[] = {", and ", ", but ", " because ", " while "};
        pe__put(t, PE__PICK(r, conj));
        pe__clause(r, t, pa, 1);
    }
    pe__put(t, ".");
}

static void pe__paragraph(pe__rng *r, pe__text *t) {
    pe__para pa;
    pa.n_names = 2 + (int)pe__rng_below(r, 2);
    for (int i = 0; i < pa.n_names; i++) pe__make_name(r, pa.names[i]);
    for (int i = 0; i < 3; i++) pa.topic[i] = PE__PICK(r, pe__nouns);
    int n = 3 + (int)pe__rng_below(r, 5);
    for (int s = 0; s < n; s++) {
        if (s) pe__put(t, " ");
        pe__sentence(r, t, &pa);
    }
    pe__put(t, "\n");
}

static int pe__lm_corpus(uint8_t *out, size_t n, uint64_t seed) {
    int8_t map[256];
    memset(map, -1, sizeof map);
    for (int i = 0; pe__lm_vocab[i]; i++) map[(uint8_t)pe__lm_vocab[i]] = (int8_t)i;
    pe__rng r = pe__rng_seed(seed, 0x4C4D);
    char buf[4096];
    size_t done = 0;
    while (done < n) {
        pe__text t = {buf, 0, sizeof buf};
        pe__paragraph(&r, &t);
        for (size_t i = 0; i < t.n && done < n; i++) {
            int8_t v = map[(uint8_t)buf[i]];
            if (v < 0) return 0; /* a character outside the vocabulary: a bug in the grammar */
            out[done++] = (uint8_t)v;
        }
    }
    return 1;
}

/* ---- tasks ------------------------------------------------------------------------------------- */

int32_t pe__task_id(const char *name) {
    if (strcmp(name, "copy") == 0) return PE__TASK_COPY;
    if (strcmp(name, "lm") == 0) return PE__TASK_LM;
    return -1;
}

int pe__task_make(pe__task *t, int32_t id, uint64_t seed, size_t n_corpus) {
    memset(t, 0, sizeof *t);
    t->id = id;
    if (id == PE__TASK_COPY) {
        t->name = "copy";
        t->vocab = pe__copy_vocab;
        t->train_len = 64;
        t->description =
            "copy: episodes '. s1..sn | s1..sn' of n = 1..16 distinct letters a-z, packed back to back; scored "
            "targets are the copied letters and the closing '.'; generated by c/model/tasks.c (splitmix64)";
    } else if (id == PE__TASK_LM) {
        t->name = "lm";
        t->vocab = pe__lm_vocab;
        t->train_len = 128;
        t->description =
            "lm: character-level English-like text from the seeded probabilistic grammar in c/model/tasks.c "
            "(paragraphs with a recurring cast of invented names; lexicon of ~170 words written for posenc, "
            "same licence as the project)";
        if (n_corpus) {
            t->corpus = (uint8_t *)malloc(n_corpus);
            if (!t->corpus) return 0;
            if (!pe__lm_corpus(t->corpus, n_corpus, seed)) {
                free(t->corpus);
                t->corpus = NULL;
                return 0;
            }
            t->n_corpus = n_corpus;
        }
    } else {
        return 0;
    }
    t->vocab_size = (int32_t)strlen(t->vocab);
    return 1;
}

void pe__task_free(pe__task *t) {
    free(t->corpus);
    t->corpus = NULL;
}

int32_t pe__task_window(const pe__task *t, size_t start, int32_t len, int32_t skip, int32_t *inputs, int32_t *targets) {
    int32_t n = 0;
    for (int32_t i = 0; i < len; i++) {
        inputs[i] = t->corpus[start + (size_t)i];
        targets[i] = i >= skip ? t->corpus[start + (size_t)i + 1] : -1;
        n += i >= skip;
    }
    return n;
}

int32_t pe__task_sample(const pe__task *t, uint64_t seed, uint64_t index, int32_t len, int32_t *inputs,
                        int32_t *targets) {
    if (t->id == PE__TASK_COPY) return pe__copy_sample(seed, index, len, inputs, targets);
    pe__rng r = pe__rng_seed(seed, index);
    size_t start = (size_t)(pe__rng_next(&r) % (uint64_t)(t->n_corpus - (size_t)len - 1));
    return pe__task_window(t, start, len, 0, inputs, targets);
}

void pe__task_decode(const pe__task *t, char *out, const int32_t *tokens, int32_t n) {
    for (int32_t i = 0; i < n; i++) out[i] = (tokens[i] >= 0 && tokens[i] < t->vocab_size) ? t->vocab[tokens[i]] : '?';
    out[n] = 0;
}
