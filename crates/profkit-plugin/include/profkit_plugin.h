/*
 * The TensorFlow pluggable profiler C ABI as profkit-plugin implements it: the same layout as
 * TensorFlow's tensorflow/c/experimental/pluggable_profiler/pluggable_profiler.h (2.7 and later),
 * with the TF_Status functions of tensorflow/c/tf_status.h that a plugin calls.
 *
 * Where the RFC differs from TensorFlow, this follows TensorFlow: the TP_Profiler field the RFC
 * calls `type` is `device_type`. The Rust side is profkit_plugin::abi; a test compiles a program
 * against this header and compares every size and offset with Rust's.
 *
 * A plugin includes this header and exports TF_InitProfiler. The TF_Status functions are provided
 * by the process that loads the plugin (TensorFlow, or profkit's host, which exports them): a
 * plugin that calls them directly leaves them undefined; one that must also load where nobody
 * provides them looks them up at run time with dlsym(RTLD_DEFAULT, "TF_SetStatus").
 */
#ifndef PROFKIT_PLUGIN_H_
#define PROFKIT_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_MAJOR 0
#define TP_MINOR 0
#define TP_PATCH 1

/* The offset of the end of MEMBER in TYPE: the "unpadded size" every struct_size holds. */
#define TF_OFFSET_OF_END(TYPE, MEMBER) \
  (offsetof(TYPE, MEMBER) + sizeof(((TYPE *)0)->MEMBER))

/* TensorFlow's status object, opaque. */
typedef struct TF_Status TF_Status;

/* TF_Code values (tensorflow/c/tf_status.h). */
typedef enum TF_Code {
  TF_OK = 0,
  TF_CANCELLED = 1,
  TF_UNKNOWN = 2,
  TF_INVALID_ARGUMENT = 3,
  TF_DEADLINE_EXCEEDED = 4,
  TF_NOT_FOUND = 5,
  TF_ALREADY_EXISTS = 6,
  TF_PERMISSION_DENIED = 7,
  TF_UNAUTHENTICATED = 16,
  TF_RESOURCE_EXHAUSTED = 8,
  TF_FAILED_PRECONDITION = 9,
  TF_ABORTED = 10,
  TF_OUT_OF_RANGE = 11,
  TF_UNIMPLEMENTED = 12,
  TF_INTERNAL = 13,
  TF_UNAVAILABLE = 14,
  TF_DATA_LOSS = 15
} TF_Code;

/* Provided by the loading process, not by the plugin. */
TF_Status *TF_NewStatus(void);
void TF_DeleteStatus(TF_Status *status);
void TF_SetStatus(TF_Status *status, TF_Code code, const char *message);
TF_Code TF_GetCode(const TF_Status *status);
const char *TF_Message(const TF_Status *status);

typedef struct TP_Profiler {
  size_t struct_size;
  void *ext; /* free-form data set by the plugin */
  const char *device_type; /* must match [A-Z][A-Z_]* */
} TP_Profiler;

#define TP_PROFILER_STRUCT_SIZE TF_OFFSET_OF_END(TP_Profiler, device_type)

typedef struct TP_ProfilerFns {
  size_t struct_size;
  void *ext; /* reserved */
  void (*start)(const TP_Profiler *profiler, TF_Status *status);
  void (*stop)(const TP_Profiler *profiler, TF_Status *status);
  /* buffer NULL: write the size of the serialised XSpace (0 for nothing) to *size_in_bytes.
   * Otherwise: copy exactly those bytes into buffer, which holds *size_in_bytes bytes. */
  void (*collect_data_xspace)(const TP_Profiler *profiler, uint8_t *buffer,
                              size_t *size_in_bytes, TF_Status *status);
} TP_ProfilerFns;

#define TP_PROFILER_FNS_STRUCT_SIZE \
  TF_OFFSET_OF_END(TP_ProfilerFns, collect_data_xspace)

typedef struct TF_ProfilerRegistrationParams {
  size_t struct_size;
  void *ext; /* reserved */
  int32_t major_version;
  int32_t minor_version;
  int32_t patch_version;
  /* [in/out] core-owned; the plugin fills the structs and must not replace the pointers. */
  TP_Profiler *profiler;
  TP_ProfilerFns *profiler_fns;
  /* [out] may be called right after registration and more than once, on copies of the
   * structs that stay in use: they must not free anything start/stop/collect still need. */
  void (*destroy_profiler)(TP_Profiler *profiler);
  void (*destroy_profiler_fns)(TP_ProfilerFns *profiler_fns);
} TF_ProfilerRegistrationParams;

#define TF_PROFILER_REGISTRATION_PARAMS_STRUCT_SIZE \
  TF_OFFSET_OF_END(TF_ProfilerRegistrationParams, destroy_profiler_fns)

/* The plugin's entry point. */
void TF_InitProfiler(TF_ProfilerRegistrationParams *params, TF_Status *status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PROFKIT_PLUGIN_H_ */
