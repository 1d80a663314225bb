/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bindgen reads to generate rroce's bindings: the RDMA and networking
 * headers the abstractions in rust/ wrap, and the C helpers.
 */

#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "helpers.h"
