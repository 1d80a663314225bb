/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libibverbs test programs share: KTAP reporting, and opening a
 * device by name.
 */
#ifndef VERBS_UTIL_H
#define VERBS_UTIL_H

#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

static int cases, failed;

static void report(int ok, const char *what)
{
	cases++;
	if (!ok)
		failed++;
	printf("%sok %d %s\n", ok ? "" : "not ", cases, what);
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

#endif
