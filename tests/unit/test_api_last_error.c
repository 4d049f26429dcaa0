// SPDX-License-Identifier: MIT
/*
 * gdrmap_last_error(): each thread's own explanation of its last failure,
 * kept with logging off, left alone by calls that succeed.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "mock_backend.h"

#define GPU_ADDR 0x7f0000000000UL

static gdr_t g;

/* A failure in another thread leaves this thread's message alone. */
static void *fail_elsewhere(void *arg)
{
	int *ok = arg;
	int v;

	*ok = gdrmap_last_error()[0] == '\0';
	gdr_get_attribute(g, (gdr_attr_t)12345, &v);
	*ok = *ok && strstr(gdrmap_last_error(), "unknown attribute 12345");
	return NULL;
}

int main(void)
{
	gdr_mh_t mh;
	pthread_t t;
	int v, other_ok = 0;

	unsetenv("GDRCOPY_ENABLE_LOGGING");
	CHECK(gdrmap_last_error() != NULL && gdrmap_last_error()[0] == '\0',
	      "empty before any failure: \"%s\"", gdrmap_last_error());
	g = mock_open_gdr();
	CHECK(g != NULL, "mock backend opens");
	if (!g)
		return test_done();

	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 0, 0, 0, &mh), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "is not a valid range") != NULL,
	      "a bad pin is explained with logging off: \"%s\"",
	      gdrmap_last_error());

	CHECK_RET(gdr_pin_buffer(g, GPU_ADDR, 65536, 0, 0, &mh), 0);
	CHECK(strstr(gdrmap_last_error(), "is not a valid range") != NULL,
	      "a successful call keeps the last explanation: \"%s\"",
	      gdrmap_last_error());

	CHECK(pthread_create(&t, NULL, fail_elsewhere, &other_ok) == 0 &&
	      pthread_join(t, NULL) == 0, "thread runs");
	CHECK(other_ok, "a new thread starts empty and gets its own message");
	CHECK(strstr(gdrmap_last_error(), "is not a valid range") != NULL,
	      "the other thread's failure did not replace this one's: \"%s\"",
	      gdrmap_last_error());

	CHECK_RET(gdr_get_attribute(g, (gdr_attr_t)777, &v), EINVAL);
	CHECK(strstr(gdrmap_last_error(), "unknown attribute 777") != NULL,
	      "the newest failure replaces it: \"%s\"", gdrmap_last_error());

	CHECK_RET(gdr_unpin_buffer(g, mh), 0);
	CHECK_RET(gdr_close(g), 0);
	return test_done();
}
