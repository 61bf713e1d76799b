/* Run-time loading of the OpenCL ICD loader, and the error-name table. */
#include "opencl_api.h"

#include <string.h>

#include "dl.h"

/* The codes of the OpenCL 3.0 specification (and cl_khr_icd's -1001),
 * written as numbers so the table does not depend on the header version. */
#define KT__CL_ERROR_MAP(XX)                            \
  XX(0, CL_SUCCESS)                                     \
  XX(-1, CL_DEVICE_NOT_FOUND)                           \
  XX(-2, CL_DEVICE_NOT_AVAILABLE)                       \
  XX(-3, CL_COMPILER_NOT_AVAILABLE)                     \
  XX(-4, CL_MEM_OBJECT_ALLOCATION_FAILURE)              \
  XX(-5, CL_OUT_OF_RESOURCES)                           \
  XX(-6, CL_OUT_OF_HOST_MEMORY)                         \
  XX(-7, CL_PROFILING_INFO_NOT_AVAILABLE)               \
  XX(-8, CL_MEM_COPY_OVERLAP)                           \
  XX(-9, CL_IMAGE_FORMAT_MISMATCH)                      \
  XX(-10, CL_IMAGE_FORMAT_NOT_SUPPORTED)                \
  XX(-11, CL_BUILD_PROGRAM_FAILURE)                     \
  XX(-12, CL_MAP_FAILURE)                               \
  XX(-13, CL_MISALIGNED_SUB_BUFFER_OFFSET)              \
  XX(-14, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) \
  XX(-15, CL_COMPILE_PROGRAM_FAILURE)                   \
  XX(-16, CL_LINKER_NOT_AVAILABLE)                      \
  XX(-17, CL_LINK_PROGRAM_FAILURE)                      \
  XX(-18, CL_DEVICE_PARTITION_FAILED)                   \
  XX(-19, CL_KERNEL_ARG_INFO_NOT_AVAILABLE)             \
  XX(-30, CL_INVALID_VALUE)                             \
  XX(-31, CL_INVALID_DEVICE_TYPE)                       \
  XX(-32, CL_INVALID_PLATFORM)                          \
  XX(-33, CL_INVALID_DEVICE)                            \
  XX(-34, CL_INVALID_CONTEXT)                           \
  XX(-35, CL_INVALID_QUEUE_PROPERTIES)                  \
  XX(-36, CL_INVALID_COMMAND_QUEUE)                     \
  XX(-37, CL_INVALID_HOST_PTR)                          \
  XX(-38, CL_INVALID_MEM_OBJECT)                        \
  XX(-39, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)           \
  XX(-40, CL_INVALID_IMAGE_SIZE)                        \
  XX(-41, CL_INVALID_SAMPLER)                           \
  XX(-42, CL_INVALID_BINARY)                            \
  XX(-43, CL_INVALID_BUILD_OPTIONS)                     \
  XX(-44, CL_INVALID_PROGRAM)                           \
  XX(-45, CL_INVALID_PROGRAM_EXECUTABLE)                \
  XX(-46, CL_INVALID_KERNEL_NAME)                       \
  XX(-47, CL_INVALID_KERNEL_DEFINITION)                 \
  XX(-48, CL_INVALID_KERNEL)                            \
  XX(-49, CL_INVALID_ARG_INDEX)                         \
  XX(-50, CL_INVALID_ARG_VALUE)                         \
  XX(-51, CL_INVALID_ARG_SIZE)                          \
  XX(-52, CL_INVALID_KERNEL_ARGS)                       \
  XX(-53, CL_INVALID_WORK_DIMENSION)                    \
  XX(-54, CL_INVALID_WORK_GROUP_SIZE)                   \
  XX(-55, CL_INVALID_WORK_ITEM_SIZE)                    \
  XX(-56, CL_INVALID_GLOBAL_OFFSET)                     \
  XX(-57, CL_INVALID_EVENT_WAIT_LIST)                   \
  XX(-58, CL_INVALID_EVENT)                             \
  XX(-59, CL_INVALID_OPERATION)                         \
  XX(-60, CL_INVALID_GL_OBJECT)                         \
  XX(-61, CL_INVALID_BUFFER_SIZE)                       \
  XX(-62, CL_INVALID_MIP_LEVEL)                         \
  XX(-63, CL_INVALID_GLOBAL_WORK_SIZE)                  \
  XX(-64, CL_INVALID_PROPERTY)                          \
  XX(-65, CL_INVALID_IMAGE_DESCRIPTOR)                  \
  XX(-66, CL_INVALID_COMPILER_OPTIONS)                  \
  XX(-67, CL_INVALID_LINKER_OPTIONS)                    \
  XX(-68, CL_INVALID_DEVICE_PARTITION_COUNT)            \
  XX(-69, CL_INVALID_PIPE_SIZE)                         \
  XX(-70, CL_INVALID_DEVICE_QUEUE)                      \
  XX(-71, CL_INVALID_SPEC_ID)                           \
  XX(-72, CL_MAX_SIZE_RESTRICTION_EXCEEDED)             \
  XX(-1001, CL_PLATFORM_NOT_FOUND_KHR)

const char *kt__cl_error_name(int code) {
  switch (code) {
#define KT__CL_ERR_CASE_(num, name) \
  case num: return #name;
    KT__CL_ERROR_MAP(KT__CL_ERR_CASE_)
#undef KT__CL_ERR_CASE_
  default: return "CL_UNKNOWN_ERROR";
  }
}

#ifdef KTUNE_HAVE_CL_H
#include <pthread.h>

static kt__cl_api api;
static int api_rc = KT_INTERNAL;
static kt__errbuf api_eb;
static pthread_once_t api_once = PTHREAD_ONCE_INIT;

static const char *const api_symbols[] = {
#define KT__CL_SYMBOL_(ret, name, params) #name,
    KT__CL_API(KT__CL_SYMBOL_)
#undef KT__CL_SYMBOL_
};
enum { API_COUNT = sizeof api_symbols / sizeof api_symbols[0] };

/* Copies resolved addresses into the typed fields; memcpy because ISO C has
 * no conversion from void * to a function pointer (POSIX guarantees that
 * they have the same representation). */
static void api_assign(void *const *addrs) {
  int i = 0;
#define KT__CL_ASSIGN_(ret, name, params) memcpy(&api.name, &addrs[i++], sizeof api.name);
  KT__CL_API(KT__CL_ASSIGN_)
#undef KT__CL_ASSIGN_
}

static void api_load_once(void) {
  static const char *const candidates[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
  void *lib = kt__dl_open_any(candidates, "OpenCL (the ICD loader libOpenCL.so.1)", &api_eb);
  if (!lib) {
    api_rc = KT_NOBACKEND;
    return;
  }
  void *addrs[API_COUNT];
  api_rc = kt__dl_resolve(lib, "OpenCL (libOpenCL.so.1)", api_symbols, addrs, API_COUNT, &api_eb);
  if (api_rc == KT_OK) api_assign(addrs);
  /* The library stays loaded for the life of the process: PoCL and vendor
   * ICDs do not support being unloaded. */
}

const kt__cl_api *kt__cl_load(kt__errbuf *eb) {
  pthread_once(&api_once, api_load_once);
  if (api_rc != KT_OK) {
    kt__err(eb, api_rc, "%s", api_eb.msg);
    return NULL;
  }
  return &api;
}
#endif
