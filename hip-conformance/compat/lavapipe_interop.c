/*
 * Mesa's lavapipe (software Vulkan, Debian mesa-vulkan-drivers) as the other API of
 * hipImportExternalMemory (issue 10), run by tests/interop_lavapipe.rs under kfdsim.
 *
 * What lavapipe 22.3 can export: device memory as VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT
 * only, and that fd is a memfd ("llvmpipe memory fd", sealed F_SEAL_SEAL|SHRINK|GROW), not a
 * dma-buf, with lavapipe's own header before the memory (Mesa `os_malloc_aligned_fd`); no
 * DMA_BUF handle type and no exportable semaphore (OPAQUE_FD and SYNC_FD features are 0). So the
 * memfd itself is refused (a kernel imports only dma-bufs), and wrapping it in a udmabuf
 * (UDMABUF_CREATE accepts it: it carries F_SEAL_SHRINK and no write seal) makes a foreign dma-buf
 * that hipkfd imports; the mapped buffer starts at the memory's byte offset in it (any offset
 * works): data both ways through lavapipe's own mapping.
 * Prints PASS, or SKIP when there is no lavapipe device.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <hip/hip_runtime_api.h>
#include <linux/udmabuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

static int failures;
#define EXPECT(c)                                                        \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                  \
        }                                                                \
    } while (0)

int main(void)
{
    const VkDeviceSize alloc = 256 * 1024;
    VkDeviceSize n = alloc;
    VkApplicationInfo ai = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &ai};
    VkInstance inst;
    uint32_t count = 1;
    VkPhysicalDevice pd;
    if (vkCreateInstance(&ici, NULL, &inst) != VK_SUCCESS || vkEnumeratePhysicalDevices(inst, &count, &pd) < 0 ||
        count == 0) {
        printf("SKIP: no Vulkan device (install mesa-vulkan-drivers)\n");
        return 0;
    }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    printf("Vulkan device: %s\n", props.deviceName);

    /* what it can share */
    VkPhysicalDeviceExternalSemaphoreInfo si = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_SEMAPHORE_INFO,
                                                .handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkExternalSemaphoreProperties sp = {.sType = VK_STRUCTURE_TYPE_EXTERNAL_SEMAPHORE_PROPERTIES};
    vkGetPhysicalDeviceExternalSemaphoreProperties(pd, &si, &sp);
    printf("exportable OPAQUE_FD semaphores: %s\n",
           sp.externalSemaphoreFeatures & VK_EXTERNAL_SEMAPHORE_FEATURE_EXPORTABLE_BIT ? "yes" : "no");

    float prio = 1;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                 .pQueuePriorities = &prio};
    const char *ext[] = {"VK_KHR_external_memory_fd"};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &q, .enabledExtensionCount = 1, .ppEnabledExtensionNames = ext};
    VkDevice dev;
    if (vkCreateDevice(pd, &dci, NULL, &dev) != VK_SUCCESS) {
        printf("SKIP: no VK_KHR_external_memory_fd\n");
        return 0;
    }
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    uint32_t type = 0;
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    while (type < mp.memoryTypeCount && (mp.memoryTypes[type].propertyFlags & want) != want)
        type++;
    VkExportMemoryAllocateInfo ei = {.sType = VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO,
                                     .handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &ei,
                                .allocationSize = alloc, .memoryTypeIndex = type};
    VkDeviceMemory mem;
    EXPECT(type < mp.memoryTypeCount && vkAllocateMemory(dev, &mai, NULL, &mem) == VK_SUCCESS);
    uint8_t *cpu = NULL;
    EXPECT(vkMapMemory(dev, mem, 0, alloc, 0, (void **)&cpu) == VK_SUCCESS);
    for (VkDeviceSize i = 0; i < n; i++)
        cpu[i] = (uint8_t)(i * 31 + 7);
    PFN_vkGetMemoryFdKHR get_fd = (PFN_vkGetMemoryFdKHR)vkGetDeviceProcAddr(dev, "vkGetMemoryFdKHR");
    VkMemoryGetFdInfoKHR gi = {.sType = VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, .memory = mem,
                               .handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    int memfd = -1;
    EXPECT(get_fd && get_fd(dev, &gi, &memfd) == VK_SUCCESS && memfd >= 0);

    /* the memfd itself is no dma-buf: refused, fd untouched */
    hipExternalMemoryHandleDesc md = {.type = hipExternalMemoryHandleTypeOpaqueFd, .size = n};
    md.handle.fd = memfd;
    hipExternalMemory_t m = NULL;
    EXPECT(hipImportExternalMemory(&m, &md) == hipErrorInvalidValue);
    EXPECT(fcntl(memfd, F_GETFD) != -1);

    /* The OPAQUE_FD memfd holds lavapipe's own header first (Mesa os_malloc_aligned_fd), then
     * the memory at an aligned offset: found by reading the file. */
    struct stat st;
    EXPECT(fstat(memfd, &st) == 0);
    size_t off = 0, whole = (size_t)st.st_size & ~(size_t)4095;
    uint8_t probe[256];
    while (off + sizeof probe <= (size_t)st.st_size &&
           !(pread(memfd, probe, sizeof probe, (off_t)off) == (ssize_t)sizeof probe && memcmp(probe, cpu, sizeof probe) == 0))
        off += 64;
    EXPECT(off + sizeof probe <= (size_t)st.st_size);
    printf("memfd of %lld bytes, memory at offset %zu\n", (long long)st.st_size, off);
    if (off + n > whole)
        n = whole - off;
    /* wrapped in a udmabuf it is a foreign dma-buf */
    int ud = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
    struct udmabuf_create c = {.memfd = (uint32_t)memfd, .flags = UDMABUF_FLAGS_CLOEXEC, .offset = 0, .size = whole};
    int buf = ud >= 0 ? ioctl(ud, UDMABUF_CREATE, &c) : -1;
    EXPECT(buf >= 0);
    md.handle.fd = buf;
    md.size = whole;
    EXPECT(hipImportExternalMemory(&m, &md) == hipSuccess);
    hipExternalMemoryBufferDesc bd = {.offset = off, .size = n};
    uint8_t *d = NULL;
    EXPECT(hipExternalMemoryGetMappedBuffer((void **)&d, m, &bd) == hipSuccess);
    uint8_t *h = malloc(n);
    EXPECT(hipMemcpy(h, d, n, hipMemcpyDeviceToHost) == hipSuccess);
    EXPECT(memcmp(h, cpu, n) == 0);
    EXPECT(hipMemset(d + 4096, 0xa5, 8192) == hipSuccess);
    int seen = 1;
    for (int i = 0; i < 8192; i++)
        seen &= cpu[4096 + i] == 0xa5;
    EXPECT(seen); /* through lavapipe's own mapping */
    EXPECT(hipFree(d) == hipSuccess);
    EXPECT(hipDestroyExternalMemory(m) == hipSuccess);
    free(h);
    close(memfd);
    close(ud);
    vkUnmapMemory(dev, mem);
    vkFreeMemory(dev, mem, NULL);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(inst, NULL);
    printf("%s: lavapipe memory (OPAQUE_FD memfd) through a udmabuf into HIP (%d failures)\n",
           failures ? "FAIL" : "PASS", failures);
    return failures != 0;
}
