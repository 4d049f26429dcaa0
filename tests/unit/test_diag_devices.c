// SPDX-License-Identifier: MIT
/*
 * The diagnosis's device check: /dev/nvidiactl, a /dev/nvidiaN and
 * /dev/nvidia-uvm, told apart from "no GPU here" by the PCI bus.
 */
#include <string.h>

#include "check.h"
#include "diag_fake.h"

static struct diag_report r;
static char *const in_docker[] = { "container=docker", NULL };

#define DEV (&r.f[DIAG_DEVICES])

int main(void)
{
	fake_new();
	fake_gpu_machine();
	fake_file("/dev/nvidia3", "");
	fake_run(&r, NULL);
	CHECK(DEV->state == DIAG_OK, "all nodes present: %s", DEV->msg);
	CHECK(strstr(DEV->msg, "/dev/nvidia0 (and more)") != NULL,
	      "names the lowest GPU node: %s", DEV->msg);
	CHECK(!strcmp(r.gpu_pci, "0000:65:00.0"), "GPU found on the bus: %s",
	      r.gpu_pci);

	fake_new();
	fake_gpu_machine();
	fake_file("/dev/nvidia12", "");
	fake_file("/dev/nvidia-modeset", "");
	fake_unlink("/dev/nvidia0");
	fake_unlink("/dev/nvidia-uvm");
	fake_run(&r, NULL);
	CHECK(DEV->state == DIAG_BAD, "no nvidia-uvm: bad");
	CHECK(strstr(DEV->msg, "/dev/nvidia-uvm missing") &&
	      !strstr(DEV->msg, "nvidia12") && !strstr(DEV->msg, "nvidiactl"),
	      "names only what is missing (nvidia12 stands for a GPU): %s",
	      DEV->msg);
	CHECK(strstr(DEV->msg, "0000:65:00.0") && strstr(DEV->fix, "modprobe"),
	      "a GPU on the bus without its nodes: load the driver: %s / %s",
	      DEV->msg, DEV->fix);

	fake_new();
	fake_file("/sys/bus/pci/devices/0000:65:00.0/vendor", "0x10de\n");
	fake_file("/sys/bus/pci/devices/0000:65:00.0/class", "0x030200\n");
	fake_run(&r, in_docker);
	CHECK(DEV->state == DIAG_BAD &&
	      strstr(DEV->msg, "/dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm missing"),
	      "every node missing: %s", DEV->msg);
	CHECK(strstr(DEV->fix, "--gpus all") != NULL,
	      "in a container: start it with the GPU: %s", DEV->fix);

	fake_new();
	fake_file("/sys/bus/pci/devices/0000:00:02.0/vendor", "0x10de\n");
	fake_file("/sys/bus/pci/devices/0000:00:02.0/class", "0x040300\n");
	fake_file("/sys/bus/pci/devices/0000:00:03.0/vendor", "0x8086\n");
	fake_file("/sys/bus/pci/devices/0000:00:03.0/class", "0x030000\n");
	fake_run(&r, NULL);
	CHECK(r.gpu_pci[0] == '\0',
	      "NVIDIA audio and Intel graphics are not NVIDIA GPUs: %s",
	      r.gpu_pci);
	CHECK(DEV->state == DIAG_BAD && strstr(DEV->msg, "no NVIDIA GPU") &&
	      strstr(DEV->fix, "no NVIDIA GPU"),
	      "no GPU anywhere says so: %s / %s", DEV->msg, DEV->fix);

	if (geteuid() == 0) {
		SKIP("root may read and write any file: no permission case");
	} else {
		char p[1024];

		fake_new();
		fake_gpu_machine();
		snprintf(p, sizeof(p), "%s/dev/nvidiactl", fake_root);
		chmod(p, 0);
		fake_run(&r, NULL);
		CHECK(DEV->state == DIAG_BAD &&
		      strstr(DEV->msg, "/dev/nvidiactl not readable") &&
		      strstr(DEV->fix, "group"),
		      "no permission: join the group: %s / %s", DEV->msg,
		      DEV->fix);
	}
	fake_done();
	return test_done();
}
