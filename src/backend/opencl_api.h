/* The OpenCL entry points the backend uses, resolved at run time from the
 * ICD loader (libOpenCL.so.1) through dl.h, so that ktune neither links
 * against OpenCL nor needs it installed. CL/cl.h is used for its types only.
 * Private to src/backend/opencl*.c. */
#ifndef KT_BACKEND_OPENCL_API_H
#define KT_BACKEND_OPENCL_API_H

#include "../common.h"

/* Name of an OpenCL error code ("CL_OUT_OF_RESOURCES"); "CL_UNKNOWN_ERROR"
 * for codes the table does not know. Usable without CL/cl.h. */
const char *kt__cl_error_name(int code);

#ifdef KTUNE_HAVE_CL_H
#include <CL/cl.h>

/* XX(return type, name, parameter list) for every function called. */
#define KT__CL_API(XX)                                                                                                 \
  XX(cl_int, clGetPlatformIDs, (cl_uint, cl_platform_id *, cl_uint *))                                                 \
  XX(cl_int, clGetPlatformInfo, (cl_platform_id, cl_platform_info, size_t, void *, size_t *))                          \
  XX(cl_int, clGetDeviceIDs, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *))                     \
  XX(cl_int, clGetDeviceInfo, (cl_device_id, cl_device_info, size_t, void *, size_t *))                                \
  XX(cl_context, clCreateContext,                                                                                      \
     (const cl_context_properties *, cl_uint, const cl_device_id *,                                                    \
      void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *))                              \
  XX(cl_int, clReleaseContext, (cl_context))                                                                           \
  XX(cl_int, clRetainContext, (cl_context))                                                                            \
  XX(cl_int, clGetContextInfo, (cl_context, cl_context_info, size_t, void *, size_t *))                                \
  XX(cl_command_queue, clCreateCommandQueue, (cl_context, cl_device_id, cl_command_queue_properties, cl_int *))        \
  XX(cl_int, clReleaseCommandQueue, (cl_command_queue))                                                                \
  XX(cl_program, clCreateProgramWithSource, (cl_context, cl_uint, const char **, const size_t *, cl_int *))            \
  XX(cl_program, clCreateProgramWithBinary,                                                                            \
     (cl_context, cl_uint, const cl_device_id *, const size_t *, const unsigned char **, cl_int *, cl_int *))          \
  XX(cl_int, clGetProgramInfo, (cl_program, cl_program_info, size_t, void *, size_t *))                                \
  XX(cl_int, clBuildProgram,                                                                                           \
     (cl_program, cl_uint, const cl_device_id *, const char *, void(CL_CALLBACK *)(cl_program, void *), void *))       \
  XX(cl_int, clGetProgramBuildInfo, (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *))       \
  XX(cl_int, clReleaseProgram, (cl_program))                                                                           \
  XX(cl_kernel, clCreateKernel, (cl_program, const char *, cl_int *))                                                  \
  XX(cl_int, clReleaseKernel, (cl_kernel))                                                                             \
  XX(cl_int, clGetKernelInfo, (cl_kernel, cl_kernel_info, size_t, void *, size_t *))                                   \
  XX(cl_int, clGetKernelWorkGroupInfo, (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *)) \
  XX(cl_int, clSetKernelArg, (cl_kernel, cl_uint, size_t, const void *))                                               \
  XX(cl_mem, clCreateBuffer, (cl_context, cl_mem_flags, size_t, void *, cl_int *))                                     \
  XX(cl_int, clReleaseMemObject, (cl_mem))                                                                             \
  XX(cl_mem, clCreateSubBuffer, (cl_mem, cl_mem_flags, cl_buffer_create_type, const void *, cl_int *))                 \
  XX(cl_int, clEnqueueWriteBuffer,                                                                                     \
     (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *))         \
  XX(cl_int, clEnqueueReadBuffer,                                                                                      \
     (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *))               \
  XX(cl_int, clEnqueueFillBuffer,                                                                                      \
     (cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *))          \
  XX(cl_int, clEnqueueNDRangeKernel,                                                                                   \
     (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint, const cl_event *, \
      cl_event *))                                                                                                     \
  XX(cl_int, clEnqueueCopyBuffer,                                                                                      \
     (cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const cl_event *, cl_event *))                \
  XX(cl_int, clFlush, (cl_command_queue))                                                                              \
  XX(cl_int, clFinish, (cl_command_queue))                                                                             \
  XX(cl_int, clWaitForEvents, (cl_uint, const cl_event *))                                                             \
  XX(cl_int, clGetEventProfilingInfo, (cl_event, cl_profiling_info, size_t, void *, size_t *))                         \
  XX(cl_int, clReleaseEvent, (cl_event))

typedef struct kt__cl_api {
#define KT__CL_FIELD_(ret, name, params) ret(CL_API_CALL *name) params;
  KT__CL_API(KT__CL_FIELD_)
#undef KT__CL_FIELD_
} kt__cl_api;

/* Loads the ICD loader once per process (thread-safe) and returns its
 * entry points, or NULL with KT_NOBACKEND's message in EB. */
const kt__cl_api *kt__cl_load(kt__errbuf *eb);
#endif

#endif
