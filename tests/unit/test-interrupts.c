/* SPDX-License-Identifier: GPL-2.0-or-later */
/* detect/interrupts.c: /proc/interrupts, and the PCI function behind an MSI line. */
#include <errno.h>

#include "detect/interrupts.h"
#include "tap.h"

/* Shape of Debian 6.1 (kernel/irq/proc.c show_interrupts) with CPU 2 offline. */
static const char text61[] =
    "           CPU0       CPU1       CPU3       \n"
    "  0:         40          0          0   IO-APIC   2-edge      timer\n"
    " 45:          0       1234          6  IR-PCI-MSI 524289-edge      mpi3mr0-msix1\n"
    " 46:          1          2          3   PCI-MSI 17334272-edge      virtio1-config\n"
    " 47:          0          0          0   IO-APIC  16-fasteoi   ehci_hcd:usb1, ahci[0000:00:17.0]\n"
    "NMI:          0          0          0   Non-maskable interrupts\n"
    "LOC:       1000       1000       1000   Local timer interrupts\n"
    "ERR:          0\n";

/* 6.2+ per-device MSI domains: the chip names the function, hwirq is the index. */
static const char text618[] = "           CPU0       CPU1       \n"
			      " 36:          0      36714 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n";

CASE(parse_debian61, "Debian 6.1 with CPU 2 offline: the CPU columns, the lines, counts summed, chip and name")
{
	struct stune_interrupts it = {0};
	unsigned bad = 0;
	CHECK(stune_interrupts_parse(text61, &it, &bad) == 0);
	CHECK(it.n_cpus == 3 && it.cpus && it.cpus[2] == 3);
	CHECK(it.n_lines == 4);
	const struct stune_irq_line *l = stune_interrupts_find(&it, 45);
	CHECK(l && l->count == 1240);
	CHECK_STR(l ? l->chip : NULL, "IR-PCI-MSI");
	CHECK_STR(l ? l->name : NULL, "mpi3mr0-msix1");
	l = stune_interrupts_find(&it, 47);
	CHECK_STR(l ? l->name : NULL, "ehci_hcd:usb1, ahci[0000:00:17.0]");
	CHECK(stune_interrupts_find(&it, 99) == NULL);
	stune_interrupts_clear(&it);
}

CASE(msi_pci_function, "an MSI line names its PCI function and vector index; a shared legacy line has none")
{
	struct stune_interrupts it = {0};
	unsigned bad = 0;
	char bdf[16] = "";
	unsigned idx = 99;
	CHECK(stune_interrupts_parse(text61, &it, &bad) == 0);
	const struct stune_irq_line *l = stune_interrupts_find(&it, 45);
	CHECK(l && stune_irq_line_pci(l, bdf, &idx) == 0);
	CHECK_STR(bdf, "0000:01:00.0");
	CHECK(idx == 1);
	l = stune_interrupts_find(&it, 46);
	CHECK(l && stune_irq_line_pci(l, bdf, &idx) == 0);
	CHECK_STR(bdf, "0000:21:02.0"); /* the pxb device seen in QEMU, kernel.md 7.1 */
	CHECK(idx == 0);
	l = stune_interrupts_find(&it, 47);
	CHECK(l && stune_irq_line_pci(l, bdf, &idx) == -ENOENT);
	stune_interrupts_clear(&it);
}

CASE(per_device_msi, "6.2+ per-device MSI domains: the chip names the function, hwirq is the index")
{
	struct stune_interrupts it = {0};
	unsigned bad = 0;
	char bdf[16] = "";
	unsigned idx = 99;
	CHECK(stune_interrupts_parse(text618, &it, &bad) == 0);
	const struct stune_irq_line *l = stune_interrupts_find(&it, 36);
	CHECK(l && stune_irq_line_pci(l, bdf, &idx) == 0);
	CHECK_STR(bdf, "0000:00:02.0");
	CHECK(idx == 1);
	stune_interrupts_clear(&it);
}

CASE(malformed, "malformed: the line number is reported and nothing is returned")
{
	struct stune_interrupts it = {0};
	unsigned bad = 0;
	CHECK(stune_interrupts_parse("           CPU0\n 12:  x  IO-APIC 1-edge foo\n", &it, &bad) == -EINVAL);
	CHECK(bad == 2);
	CHECK(it.n_lines == 0);
	CHECK(stune_interrupts_parse("garbage\n", &it, &bad) == -EINVAL);
	CHECK(bad == 1);
	CHECK(stune_interrupts_parse("", &it, &bad) == -EINVAL);
	stune_interrupts_clear(&it);
}

int main(int argc, char **argv)
{
	return tap_main(argc, argv);
}
