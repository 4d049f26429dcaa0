// SPDX-License-Identifier: MIT
/*
 * The diagnosis's container check: each way a container shows itself,
 * NVIDIA_DRIVER_CAPABILITIES read as the NVIDIA runtime reads it, and a
 * cause only where the Vulkan driver is missing as a result.
 */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;

#define CONT (&r.f[DIAG_CONTAINER])

/* Detected by one signal alone, on an otherwise empty root. */
static void signal(const char *file, const char *cgroup, char *const *env,
		   const char *want, int kubernetes)
{
	fake_new();
	if (file)
		fake_file(file, "");
	if (cgroup)
		fake_file("/proc/1/cgroup", cgroup);
	fake_run(&r, env);
	CHECK(strstr(r.container, want) != NULL, "detected by %s: \"%s\"",
	      want, r.container);
	CHECK(r.kubernetes == kubernetes, "%s: kubernetes %d", want,
	      r.kubernetes);
	CHECK(CONT->state == DIAG_BAD, "%s, no graphics, no driver: bad",
	      want);
	CHECK(strstr(CONT->fix, kubernetes ? "container's env" :
		     "docker run --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics"),
	      "%s: the fix fits the runtime: %s", want, CONT->fix);
	CHECK(strstr(CONT->fix, "/dev/gdrdrv") != NULL,
	      "%s: and says what to do without graphics: %s", want,
	      CONT->fix);
}

static void signals(void)
{
	static char *const podman[] = { "container=podman", NULL };
	static char *const k8s[] = { "KUBERNETES_SERVICE_HOST=10.0.0.1",
				     NULL };

	signal("/.dockerenv", NULL, NULL, "/.dockerenv", 0);
	signal("/run/.containerenv", NULL, NULL, "/run/.containerenv", 0);
	signal(NULL, NULL, podman, "container=podman", 0);
	signal(NULL, NULL, k8s, "KUBERNETES_SERVICE_HOST", 1);
	signal("/run/secrets/kubernetes.io/serviceaccount/token", NULL, NULL,
	       "/run/secrets/kubernetes.io", 1);
	signal(NULL, "12:cpuset:/docker/0123abcd\n", NULL,
	       "/proc/1/cgroup: docker", 0);
	signal(NULL, "0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-1.scope\n",
	       NULL, "/proc/1/cgroup: kubepods", 1);

	fake_new();
	fake_file("/proc/1/cgroup", "0::/init.scope\n");
	fake_run(&r, NULL);
	CHECK(r.container[0] == '\0' && CONT->state == DIAG_OK &&
	      strstr(CONT->msg, "not in a container"),
	      "a host is not a container: \"%s\" %s", r.container, CONT->msg);
}

/* What a capability list grants, read by the runtime's rules. */
static void caps(const char *value, int graphics)
{
	char var[160];
	char *env[] = { "container=docker", var, NULL };

	snprintf(var, sizeof(var), "NVIDIA_DRIVER_CAPABILITIES=%s", value);
	fake_new();
	fake_run(&r, env);
	CHECK(r.graphics == graphics, "\"%s\": graphics %d", value,
	      r.graphics);
	CHECK((CONT->state == DIAG_OK) == graphics, "\"%s\": %s", value,
	      CONT->msg);
}

static void capabilities(void)
{
	static char *const unset[] = { "container=docker", NULL };

	caps("compute,utility", 0);
	caps("compute,utility,graphics", 1);
	caps("all", 1);
	caps(" compute , graphics ", 1);
	caps("graphicsx,compute", 0);
	caps("", 0);
	fake_new();
	fake_run(&r, unset);
	CHECK(CONT->state == DIAG_BAD &&
	      strstr(CONT->msg, "unset: the NVIDIA runtime's default compute,utility"),
	      "unset means the runtime's default: %s", CONT->msg);
}

static void driver_present_anyway(void)
{
	static char *const env[] = { "container=docker",
		"NVIDIA_DRIVER_CAPABILITIES=compute,utility", NULL };

	fake_new();
	fake_gpu_machine();
	fake_run(&r, env);
	CHECK(CONT->state == DIAG_OK && strstr(CONT->msg, "yet the NVIDIA Vulkan driver loads"),
	      "no graphics but the driver is there: not a cause: %s",
	      CONT->msg);
}

int main(void)
{
	signals();
	capabilities();
	driver_present_anyway();
	fake_done();
	return test_done();
}
