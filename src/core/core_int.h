/* The engine's private objects, one header each: the context (ctx.h),
 * gates and their scheduler (gate.h), requests and chunks (request.h), the
 * protocols (proto.h); every file of src/core takes them all here.
 *
 * The application thread never touches the network directly: it builds a
 * request, queues its chunk on the gate of the destination, and the scheduler
 * turns the gate's backlog into packets whenever the gate's track is idle
 * (seed 000: "decouple MPI_Send/Recv from NIC send/recv"). With an idle track
 * the submitting thread runs the scheduler itself, so a lone message leaves at
 * once with no hand-off.
 */
#ifndef WEFT_CORE_INT_H
#define WEFT_CORE_INT_H

#include "core/ctx.h"
#include "core/gate.h"
#include "core/proto.h"
#include "core/request.h"

/* By concern, after the types above: */
#include "core/core_progress.h" /* cooperative rendezvous, waiting, progress */
#include "core/core_strategy.h" /* strategies, multi-rail */

#endif
