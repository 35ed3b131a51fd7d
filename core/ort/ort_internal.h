/* The ORT format loader (core/ort): detection by content, and the verified buffer translated into the ONNX
 * loader's ModelProto, so one converter (core/onnx/load.c) builds the IR and applies every semantic check for
 * both formats. */
#ifndef PC_ORT_INTERNAL_H
#define PC_ORT_INTERNAL_H

#include "core/onnx/onnx_internal.h"

/* Verifies data against ort.fbs (fb_verify), checks what the ORT format says beyond the schema (ort_version,
 * node indices and edges, NodeArg bindings, external data) and builds the equivalent ModelProto in alloc's
 * blocks: strings point into data (which must outlive the conversion), raw_data is copied into blocks the
 * converter can adopt. Each node's execution_provider_type becomes its "pc_ep" metadata, which the converter
 * turns into the IR's EP assignment. */
pc_status pc_ort_to_model_proto(const uint8_t *data, size_t size, pc_pb_allocator *alloc,
                                const pc_load_options *opts, Onnx__ModelProto **out, pc_error *err);

#endif
