/* The kernel's arguments on the host side: tensors allocated per @kernel and
 * the runtime sizes, filled with seeded data. Initial contents and reference
 * outputs live in shared memory (MAP_SHARED) so that every forked worker,
 * restarted ones included, sees the same inputs and the same reference. */
#ifndef KT_ARGS_H
#define KT_ARGS_H

#include "../data/datafile.h"
#include "../lang/decl.h"

typedef struct kt__host_tensor {
  int param; /* index into decl->params */
  kt__dtype type;
  kt__mode mode;
  uint64_t count; /* elements */
  size_t bytes;
  void *initial;   /* shared: content before every run (inputs, inout, initialised outs) */
  void *reference; /* shared: the reference configuration's result (out/inout) */
  uint64_t *shape; /* the evaluated dims, outermost first (for messages); with
                      tuned names in the shape, each the largest over the space */
  int ndims;
  bool shape_tuned; /* the shape uses tuned names: COUNT is the largest */
  bool ranged;      /* = random(LO, HI) */
  int64_t lo, hi;   /* ... its range, evaluated */
  /* How outputs are judged (true for outputs unless the tuner, before the
   * worker starts, says otherwise):
   * COMPARED against REFERENCE elementwise; REFERENCE_SET when REFERENCE
   * holds the expected content (the default's, --expect's or @reference's),
   * which an author's check then sees. */
  bool compared, reference_set;
  /* The initial content where another process holds it on the device (a
   * blocking miss's caller's tensor: runtime/tune_request.h), which the
   * worker copies there instead of uploading INITIAL; INITIAL was then
   * never written. SHARED.set 0: none. */
  kt__shared_buffer shared;
} kt__host_tensor;

typedef struct kt__argset {
  kt__host_tensor *tensors;
  int ntensors;
  int *tensor_of_param; /* param index -> tensor index, -1 for scalars */
  size_t total_bytes;
  /* The shared memory (kt__argset_map, kt__argset_attach): every tensor's
   * initial content and reference, page-aligned, in one mapping of FD (a
   * memfd: -1 when planned only, or attached). */
  int fd;
  size_t fd_offset; /* where the layout starts in FD (page-aligned; kt__argset_adopt) */
  bool adopted;     /* made by kt__argset_adopt: the caller's tensors are in it already */
  void *base;
  size_t map_bytes;
} kt__argset;

/* Whether tensor T of DECL is an output without an initial value: the
 * worker poisons it before every checked run (and fills it with decoys
 * before the others), so its initial content is never read. */
bool kt__output_poisoned(const kt__kernel_decl *decl, const kt__host_tensor *t);

/* Maps the shared memory of the tensors of DECL for runtime sizes SIZES (a
 * shape that uses tuned names is allocated for the largest over their
 * choices), before a worker is forked, so that it sees the same pages;
 * kt__argset_fill writes them, which the tuner does while the worker opens
 * its device. Refuses (KT_INVALID) negative or absurd shapes, and totals
 * beyond MAX_BYTES, before allocating anything. MAX_BYTES counts one copy of
 * every tensor (what the device holds); 0 means half the machine's physical
 * memory. */
int kt__argset_map(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, kt__argset **out,
                   kt__errbuf *eb);
/* As kt__argset_map, in shared memory another process made: FD (a memfd,
 * duplicated and kept open) from OFFSET (page-aligned) on holds BYTES of
 * A's layout (kt__argset_layout), its in and inout tensors' initial
 * contents written already or to come; KT_NOTFOUND, nothing mapped, when
 * the layout of DECL at SIZES has another length (planned differently).
 * What the tuning helper tunes on: the application writes the caller's
 * tensors straight into the layout in its request (runtime/tune_request.h),
 * so the helper maps them instead of copying them (0.065 s at 256 MB on the
 * H200, 0.34 s at 1 GB). */
int kt__argset_adopt(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, int fd, size_t offset,
                     size_t bytes, kt__argset **out, kt__errbuf *eb);
/* Where each tensor's initial content and reference lie in the shared
 * memory, from its layout's start (SIZE_MAX: no reference), in
 * A->tensors' order (INITIAL, REFERENCE NULL: not wanted); sets
 * A->map_bytes. */
void kt__argset_layout(kt__argset *a, size_t *initial, size_t *reference);
/* The tensors of DECL at SIZES in the shared memory another process mapped
 * (kt__argset_map's FD from OFFSET, received over a socket; not kept open),
 * with how that process judges each output (COMPARED, REFERENCE_SET, per
 * tensor): what a worker that outlives one tuning serves the next one from. */
int kt__argset_attach(const kt__kernel_decl *decl, const kt__env *sizes, int fd, size_t offset, const bool *compared,
                      const bool *reference_set, kt__argset **out, kt__errbuf *eb);
/* The tensors' shapes and sizes only (no memory mapped: initial and
 * reference stay NULL), with the same checks: what kt_launch needs to copy
 * the caller's tensors for a tuning. */
int kt__argset_plan(const kt__kernel_decl *decl, const kt__env *sizes, uint64_t max_bytes, kt__argset **out,
                    kt__errbuf *eb);
/* Writes every tensor's initial content: its @kernel initial value (tensor I
 * from seed SEED + I, so adding a tensor does not change the others'
 * contents), or the file INPUTS names for its parameter (NULL, or path NULL:
 * none); outputs
 * with a file in EXPECTS get it as their reference. KT_IO when a file
 * cannot be read whole (the headers are checked before, kt__kernel_check_file).
 * An in or inout tensor whose parameter has GIVEN[p] (GIVEN NULL: none) is
 * left alone: kt__argset_take copies its content in later. */
int kt__argset_fill(const kt__kernel_decl *decl, uint64_t seed, const kt__data_source *inputs,
                    const kt__data_source *expects, void *const *given, kt__argset *a, kt__errbuf *eb);
/* Copies GIVEN[p] (the caller's data) into the initial content of each in
 * and inout tensor that has one, on all cores. */
void kt__argset_take(kt__argset *a, void *const *given);
void kt__argset_free(kt__argset *a);

/* Launch geometry of one configuration: ENV binds tuned names and sizes.
 * Missing @grid/@block give 1. KT_INVALID (the reason in EB) for an extent
 * below 1 or more than 2^64 work-items in all (grid * block, every
 * dimension): the worker reports either as a constraint. */
int kt__launch_geometry(const kt__kernel_decl *decl, const kt__env *env, uint64_t grid[3], uint64_t block[3],
                        uint64_t *shared_bytes, kt__errbuf *eb);

/* Value of scalar parameter P (its bound expression, else the name itself). */
int kt__scalar_value(const kt__kernel_decl *decl, int p, const kt__env *env, unsigned char out[8], size_t *size,
                     kt__errbuf *eb);

/* Evaluates E over ENV; KT_INVALID naming WHAT, the operator and the values
 * when it cannot be evaluated. */
int kt__eval_for(const kt__expr *e, const kt__env *env, const char *what, int64_t *out, kt__errbuf *eb);

/* Writes "name[i, j, k]" for flat element index I of tensor T (messages). */
void kt__tensor_index_text(const kt__kernel_decl *decl, const kt__host_tensor *t, uint64_t i, char *buf, size_t size);
/* Looks NAME up in ENV and its parents; false when unbound. */
bool kt__env_lookup(const kt__env *env, const char *name, int64_t *out);

#endif
