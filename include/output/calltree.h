/* calltree.h - the call tree of a profile's stacks, for the tree-shaped writers (text tree, JSON tree).
 *
 * Frame names become ids (equal names share one, ids follow strcmp order); the tree is keyed by (parent, name id),
 * so frames of the same name and different types are one node. Node 0 is the root: its total is the weight of every
 * stack built in, its self the weight of those without frames. A walk visits the nodes below the root in preorder,
 * children by total weight descending, then by name. Rules: plain heap memory, not for signal context; functions
 * that allocate return 0, or -1 when memory runs out, and leave their object empty then; every object is zeroed by
 * its _free function, so freeing twice, or after a failed build, is safe.
 */
#ifndef JS_CALLTREE_H
#define JS_CALLTREE_H

#include <stddef.h>
#include <stdint.h>
#include "output/profile.h"

#define JS_CALLTREE_NONE UINT32_MAX /* no node: the root's parent, the end of a walk */

typedef struct {
    uint32_t *id;      /* per frame of the profile: its name id */
    const char **name; /* per name id: the name (the profile's string) */
    size_t n;          /* distinct names */
} js_calltree_names;

typedef struct {
    uint32_t *parent, *nid; /* per node: parent node (JS_CALLTREE_NONE for the root), name id */
    uint64_t *total, *self; /* per node: weight of the stacks through it, of the stacks ending in it */
    size_t n, cap;          /* nodes in use, nodes allocated */
    uint32_t *slots;        /* open addressing over (parent, nid) -> node */
    size_t nslots;          /* a power of two, at least twice n */
    uint32_t maxdepth;      /* frames of the deepest stack built in */
    uint64_t probes;        /* slots looked at past the first in the lookups of the build (how clustered) */
} js_calltree;

/* Which stacks a tree holds: nonzero keeps st (ctx is the caller's). */
typedef int (*js_calltree_keep)(const js_profile *p, const js_pstack *st, void *ctx);

typedef struct {
    const js_calltree *t;
    uint32_t *order;        /* the nodes below the root grouped by parent, each group in child order */
    size_t *first;          /* per node: index in order of its first child */
    uint32_t *count;        /* per node: its children */
    size_t *pos, *end;      /* per level: next and end index in order */
    uint32_t level;         /* level of the node last returned */
    uint32_t last;          /* node last returned; JS_CALLTREE_NONE before the first or after a skip */
} js_calltree_walk;

/* Fills nm with the name ids of p's frames; 0, or -1 without memory. */
int js_calltree_names_build(js_calltree_names *nm, const js_profile *p);
/* Releases what nm owns and zeroes it. */
void js_calltree_names_free(js_calltree_names *nm);
/* Builds t from p's stacks that keep accepts (NULL keeps all), named by nm; 0, or -1 without memory or node ids. */
int js_calltree_build(js_calltree *t, const js_profile *p, const js_calltree_names *nm, js_calltree_keep keep,
                      void *ctx);
/* Releases what t owns and zeroes it. */
void js_calltree_free(js_calltree *t);
/* Starts a preorder walk of a built t (which must outlive it, unchanged); 0, or -1 without memory. */
int js_calltree_walk_begin(js_calltree_walk *w, const js_calltree *t);
/* The next node in preorder, its level (0 = children of the root) in *level; JS_CALLTREE_NONE at the end. */
uint32_t js_calltree_walk_next(js_calltree_walk *w, uint32_t *level);
/* Skips the last node's subtree and later siblings; their count (it included), their totals added to *total. */
size_t js_calltree_walk_skip_siblings(js_calltree_walk *w, uint64_t *total);
/* Releases what w owns and zeroes it. */
void js_calltree_walk_free(js_calltree_walk *w);

#endif
