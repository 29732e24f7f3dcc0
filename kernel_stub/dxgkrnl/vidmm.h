// VidMm, the OS memory manager, one per adapter: hands out physical ranges of system memory and of the
// adapter's local memory segment (bump-pointer), and owns the adapter's GPU VA spaces (gpu_va.h): the
// system (paging) process's, space 0, which the CMP uses (F10), and one per app process.
// System memory is one heap shared by every adapter's VidMm (one machine, one DRAM), so allocations
// of two adapters never overlap; a cross-adapter resource (CASO support) is allocated there.
//
// Global allocations (allocate(): the driver's rings, fence pages, event ring, and what scenarios
// allocate as shared resources) are mapped into every GPU VA space of every adapter that can reach
// them, at a VA equal to their physical address (a layout choice: VA ranges of two segments then never
// collide; the VA stays when the pages move). Their page tables are written straight into page-table
// memory when they are created (the pages were never mapped, so no TLB can hold them).
// Page tables live in the top vidmm.page_table_mb of the local segment.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hw_model/core/params.h"
#include "hw_model/core/vcd.h"
#include "hw_model/gpu/packets.h"
#include "kernel_stub/dxgkrnl/gpu_va.h"

namespace gpumodel {

// The segments of Allocation notifications: the implicit system-memory segment, the local segment (the dGPU's VRAM; the
// iGPU's stolen memory) and an aperture segment (system memory the GPU reaches through its page tables,
// like the implicit one, but managed as a segment with a budget).
enum class Segment { System, Local, Aperture };

// DXGK_ALLOCATIONINFOFLAGS2, the WDDM 3.2 notification flags (A1).
struct DxgkAllocationInfoFlags2 {
  bool notify_eviction = false;
  bool notify_iommu_unmap = false;
};

// A physical range handed out bump-pointer style.
class PhysHeap {
 public:
  PhysHeap(uint64_t base, uint64_t size, std::string what)
      : base_(base), size_(size), next_(base), what_(std::move(what)) {}
  // A request that does not fit is a model fault (reported; returns the base).
  uint64_t allocate(uint64_t bytes, uint64_t align);
  uint64_t base() const { return base_; }
  uint64_t size() const { return size_; }
  uint64_t used() const { return next_ - base_; }
  std::vector<class VidMm*> users;                   // the VidMms that map this heap's allocations (system memory)
  std::shared_ptr<class IommuDomain> global_domain;  // iommu.model = gpuva_iommu_global: every adapter's

 private:
  uint64_t base_, size_, next_;
  std::string what_;  // names the parameter that sizes it, for the fault message
};

// A cross-adapter resource's layout (d3dukmdt.h: D3DKMT_CROSS_ADAPTER_RESOURCE_PITCH_ALIGNMENT 128,
// D3DKMT_CROSS_ADAPTER_RESOURCE_HEIGHT_ALIGNMENT 4; docs/calibration.md).
struct CrossAdapterSurface {
  static constexpr uint32_t kPitchAlignment = 128;
  static constexpr uint32_t kHeightAlignment = 4;
  uint64_t address = 0;
  uint32_t width = 0, height = 0, bytes_per_pixel = 0;
  uint32_t pitch = 0;  // bytes per row, a multiple of kPitchAlignment
  uint32_t rows = 0;   // allocated rows, a multiple of kHeightAlignment
  uint64_t bytes() const { return uint64_t(pitch) * rows; }
};

class Memory;
class Cpu;
class Kmd;
class PacketScheduler;
struct SchedContext;
struct SchedDevice;
struct Allocation;
struct KEvent;

// An allocation VidMm manages (D3DKMTCreateAllocation): its process, segment, GPU VA in the process's
// space, backing, residency and the driver's notification flags (A1).
struct VidMmAllocation {
  uint32_t handle = 0;
  int process = 1;
  Segment segment = Segment::Aperture;
  uint64_t bytes = 0;
  uint64_t va = 0;          // in the process's GPU VA space
  uint64_t addr = 0;        // backing: physical (a DMA address in system memory)
  uint64_t evicted_to = 0;  // a local allocation while evicted: where its contents went in system memory
  bool resident = false;
  DxgkAllocationInfoFlags2 flags;
  uint64_t last_use = 0;              // LRU order for eviction under the budget
  const Allocation* sched = nullptr;  // what paging packets reference, with its owner: the process's device (T7)
  uint64_t shadow = 0;  // a local allocation: VidMm's system-memory copy of its contents (restored after BACO)
};

// Read-only notifications for monitors and scenarios.
struct VidMmObserver {
  std::function<void(const VidMmAllocation&)> created;  // placed and mapped (CreateAllocation)
  std::function<void(const VidMmAllocation&)> eviction_started;
  // A NotifyEviction chunk's paging operation completed: [offset, offset + bytes) of the allocation.
  std::function<void(const VidMmAllocation&, uint64_t offset, uint64_t bytes)> eviction_notified;
  std::function<void(const VidMmAllocation&)> iommu_unmap_notified;  // its NotifyIoMmuUnmap operation completed
  // Unmapped: from the process's GPU VA (iommu false) or from the IOMMU (true), visible to the hardware.
  std::function<void(const VidMmAllocation&, bool iommu)> unmapped;
  std::function<void(const VidMmAllocation&)> evicted;
  std::function<void(const VidMmAllocation&)> made_resident;  // mapped again (process VA and IOMMU)
  // One of VidMm's paging packets counted done (its operations' effects are relied on): `p` is how it retired.
  std::function<void(const struct DmaPacket& p)> paging_done;
  // After an adapter reset: the local memory's contents lost (before the restore) and restored (after it).
  std::function<void()> vram_lost, vram_restored;
};

// An IOMMU domain's tables (iommu.h's format) as the OS keeps them, in system memory.
class IommuDomain {
 public:
  explicit IommuDomain(std::function<uint64_t()> alloc_table) : alloc_(std::move(alloc_table)) { root_ = alloc_(); }
  uint64_t root() const { return root_; }
  void map(uint64_t iova, uint64_t addr, uint64_t bytes, std::vector<PteWrite>& out);
  void unmap(uint64_t iova, uint64_t bytes, std::vector<PteWrite>& out);

 private:
  uint64_t leaf(uint64_t iova, std::vector<PteWrite>& out);
  std::function<uint64_t()> alloc_;
  uint64_t root_;
  std::map<uint64_t, uint64_t> entries_;
};

class VidMm {
 public:
  // `table_memory`: the memory that holds the local segment (page tables are written into it);
  // `page_table_bytes`: carved from the top of the local segment.
  VidMm(PhysHeap& system, uint64_t local_base, uint64_t local_size, std::string local_what, Memory* table_memory,
        uint64_t page_table_bytes);
  ~VidMm();
  // A global allocation: returns its physical address, which is also its GPU VA in every space; a request
  // that does not fit is a model fault (reported). `global` false: placed only, mapped in no space (a
  // native fence's values, which each process reaches through its own mapping: map_process_alias).
  uint64_t allocate(Segment seg, uint64_t bytes, uint64_t align = 4096, bool global = true);
  // GPU VA spaces: 0 = the system (paging) process, n > 0 an app process (created at first use).
  GpuVaSpace& space(int process);
  uint64_t system_root() { return space(0).root(); }
  uint64_t page_table_bytes() const;  // page-table memory in use, every space
  // Writes entries straight into page-table memory (new mappings; see above).
  void write_entries(const std::vector<PteWrite>& w);

  // ---- Residency and paging (Allocation notifications). Dxgkrnl's side; the calls below run on a CPU thread. ----
  static void declare_params(ParamSet& ps);
  // The rest of the adapter's stack; `iommu_port`: the adapter's requester port on the IOMMU.
  // `vcd`, `adapter`: the trace <adapter>.vidmm.evict (the eviction's current step), added at the first one.
  void connect(const ParamSet& ps, Cpu& cpu, Kmd& kmd, PacketScheduler& sched, Memory& sysmem, unsigned iommu_port,
               Vcd& vcd, const std::string& adapter);
  // Adapter start (Dxgkrnl, before DxgkDdiStartDevice): the DMA-remapping domain (iommu.model), the paging
  // process's GPU VA space (A4).
  void start(bool hardware_scheduling);
  // A4: the paging process has a GPU VA space only with a local segment or hardware scheduling.
  static bool paging_va_exists(uint64_t largest_local_segment, bool hardware_scheduling) {
    return largest_local_segment > 0 || hardware_scheduling;
  }
  // A4: the OS's default size: max(1/4 of the largest local segment, the hardware-scheduling log buffers).
  static uint64_t paging_va_default(uint64_t largest_local_segment, uint64_t log_buffer_bytes) {
    return std::max(largest_local_segment / 4, log_buffer_bytes);
  }
  // The hardware-scheduling log buffers: two 4 KiB logs per HW queue (SPEC F16; docs/calibration.md).
  static uint64_t log_buffer_bytes(uint32_t hw_queues) { return uint64_t(hw_queues) * 2 * 4096; }
  uint64_t largest_local_segment() const { return local_.size() + tables_.size(); }  // page-table memory included
  uint64_t paging_va_bytes() const { return paging_va_bytes_; }                      // 0: none
  bool paging_va_from_driver() const { return paging_va_from_driver_; }
  // A4: the physical adapter indexes the OS asked the size for (0; each of a linked adapter's, in order).
  const std::vector<uint32_t>& paging_va_indexes_asked() const { return paging_va_indexes_; }
  uint64_t paging_page_table_bytes() const { return paging_pt_bytes_; }  // the window's tables, always resident
  // D3DKMTCreateAllocation: placement in `seg` (resident), mapped at a fresh VA of the process; the
  // driver's flags from DxgkDdiCreateAllocation (A1). May evict others to stay within the budget.
  // `owner`: the process's device that owns it (null: the one VidMm keeps for the process); a paging packet that
  // references it and hangs puts that device in error state, never the system device (T7).
  VidMmAllocation* CreateAllocation(int process, Segment seg, const struct DxgkCreateAllocationArgs& args,
                                    SchedDevice* owner = nullptr);
  // Evicts a resident allocation (A2, A3); returns when it is done. A local one is transferred to system
  // memory through the paging process's VA first. `wait_fence`/`wait_value`: its first paging packet
  // (NotifyEviction or transfer) waits on the GPU for the allocation's last writer first (0: none).
  void Evict(VidMmAllocation* a, FenceVa wait_fence = {}, uint64_t wait_value = 0);
  // A local allocation's contents from its system-memory copy (`shadow`, which the caller filled): paging
  // transfers over the link; returns when they completed. The restore after an adapter reset does the same.
  void Upload(VidMmAllocation* a);
  // Runtime D3cold (dxgkrnl/runtime_pm.h): the bytes of local memory in use (resident local allocations);
  // every one copied to its system-memory copy before a power-off that turns the video memory off (returns
  // the bytes), and back after the power-on. Paging copies on the GPU; the calling thread waits for them.
  uint64_t local_resident_bytes() const;
  uint64_t save_local_for_power_off();
  void restore_local_after_power_on();
  const std::vector<std::unique_ptr<VidMmAllocation>>& all() const { return allocs_; }
  const SchedContext* paging_context() const { return paging_ctx_; }  // its paging packets' context (null: none yet)
  // Adapter resets: bytes restored into local memory, paging packets the reset aborted (each redone after it).
  uint64_t restored_bytes() const { return restored_bytes_; }
  uint64_t restores() const { return restores_; }
  uint64_t paging_redone() const { return paging_redone_; }
  static constexpr uint8_t kPoison = 0xDB;  // what BACO's lost local memory reads as (the model's stand-in)
  // Brings an evicted allocation back (a promotion): a local one is placed anew in the local segment and its
  // contents transferred back from system memory through the paging process's VA, then it is mapped again.
  void MakeResident(VidMmAllocation* a);
  // DXGK_OPERATION_FILL: fills a resident allocation with `pattern` (a 32-bit value repeated), chunked by the
  // paging process's VA as transfers and notifications are (A4): per chunk the window maps it, the fill,
  // the unmap. A chunk's fill larger than one paging DMA buffer holds (Kmd::fill_bytes_per_packet) goes on
  // in the next packets, as VidMm resubmits what DxgkDdiBuildPagingBuffer could not take. Returns when done.
  void Fill(VidMmAllocation* a, uint32_t pattern);
  uint64_t fill_chunks() const { return fill_chunks_; }
  uint64_t transfer_chunks() const { return transfer_chunks_; }
  VidMmObserver observer;
  bool iommu_remapping() const { return iommu_model_ != 0; }
  uint64_t iommu_root() const { return domain_ ? domain_->root() : 0; }
  // Counters: paging DMA packets, NotifyEviction chunks, bytes the paging engine moved (transfers and the
  // notify work's copies), evictions.
  uint64_t paging_packets() const { return paging_packets_; }
  uint64_t notify_chunks() const { return notify_chunks_; }
  uint64_t bytes_moved() const { return bytes_moved_; }
  uint64_t evictions() const { return evictions_; }
  size_t allocations() const { return allocs_.size(); }
  uint64_t budget_bytes() const { return budget_; }
  uint64_t resident_system_bytes() const { return resident_sys_; }
  // F10: a system-process GPU VA for `addr` (a fence value's page mapped a second time, away from its
  // physical address, as the OS does with MapToGpuSystemProcess). `read_only`: a GPU write through it
  // faults (a MonitoredValue: "readable using GPU VA, no write access"). `bytes` from `addr` are reached
  // (a value: its page; a log buffer: all its pages).
  uint64_t map_system_alias(uint64_t addr, bool read_only = false, uint64_t bytes = 8) {
    return map_alias(0, addr, read_only, bytes);
  }
  // A process's own GPU VA for `addr` (a native fence's values as that process's packets name them,
  // D3DDDI_NATIVEFENCE_MAPPING), one mapping per page, process and right.
  uint64_t map_process_alias(int process, uint64_t addr, bool read_only) {
    return map_alias(process, addr, read_only, 8);
  }
  // The page of `addr` mapped at its own address in the system process (a driver's own mapping; idempotent).
  void map_system_identity(uint64_t addr);
  static constexpr uint64_t kBigPageThreshold = 1ull << 20;        // allocate(): 64 KiB aligned from this size
  static constexpr uint64_t kPagingVaBase = 0xF000'0000'0000ull;   // the paging process's window (space 0)
  static constexpr uint64_t kProcessVaBase = 0x4000'0000'0000ull;  // app processes' private allocations
  static constexpr uint64_t kAliasVaBase = 0xE000'0000'0000ull;    // F10 aliases (space 0)
  static constexpr uint64_t kFenceVaBase = 0x5000'0000'0000ull;    // app processes' fence value mappings
  // D3D11/12 CrossAdapter resource (CASO support, C1-C3): in system memory, visible to every adapter.
  CrossAdapterSurface allocate_cross_adapter(uint32_t width, uint32_t height, uint32_t bytes_per_pixel);
  uint64_t local_base() const { return local_.base(); }
  uint64_t local_size() const { return local_.size(); }

 private:
  struct Global {
    uint64_t addr, bytes;
    bool system;
  };
  void map_global(const Global& g);
  PhysHeap& sys_;
  PhysHeap local_;
  PhysHeap tables_;
  Memory* table_mem_;
  std::vector<Global> globals_;
  std::map<int, std::unique_ptr<GpuVaSpace>> spaces_;
  // Residency.
  // One paging packet (the KMD builds `ops`); `completed` runs when it completes (in the DPC).
  void run_paging(std::vector<struct DxgkPagingOp> ops, const VidMmAllocation* a,
                  std::function<void()> completed = nullptr, bool first = false);
  struct PagingJob {  // one paging packet's operations, kept until it completes (an aborted one is redone)
    std::vector<struct DxgkPagingOp> ops;
    const VidMmAllocation* a;
    std::function<void()> completed;
  };
  void submit(std::shared_ptr<PagingJob> job, bool first);
  std::vector<std::shared_ptr<PagingJob>> redo_;  // aborted by an adapter reset: submitted again after the restore
  // [dst, dst + bytes) from [src, src + bytes) through the paging window, half of it for each side.
  void copy_via_window(uint64_t src, bool src_system, uint64_t dst, bool dst_system, uint64_t bytes,
                       const VidMmAllocation& a, bool first);
  void lose_vram();            // PacketScheduler::vram_lost
  bool restore_after_reset();  // PacketScheduler::restore
  std::unique_ptr<KEvent> restore_done_;
  uint64_t restore_pending_ = 0;  // the restore's and redone packets not yet completed
  bool in_restore_ = false;
  SchedDevice* process_device(int process);
  std::map<int, SchedDevice*> process_devices_;
  uint64_t restored_bytes_ = 0, restores_ = 0, paging_redone_ = 0;
  void wait_paging();  // every paging packet submitted so far has completed
  struct WindowMap {
    uint64_t offset, addr;  // window offset -> address
    bool system;
  };
  void through_window(const std::vector<WindowMap>& maps, uint64_t bytes, const struct DxgkPagingOp& op,
                      const VidMmAllocation& a, std::function<void()> completed);
  // The window's map and unmap of `maps` (UpdatePageTable operations of the system process).
  void window_ops(const std::vector<WindowMap>& maps, uint64_t bytes, struct DxgkPagingOp& map,
                  struct DxgkPagingOp& unmap);
  // A transfer of a's `bytes` from `src` to `dst` through the window, half of it for each side, chunk by chunk.
  // `wait_fence`/`wait_value`: the first chunk's packet waits on the GPU for that value first (0: none).
  void transfer(const VidMmAllocation& a, uint64_t src, bool src_system, uint64_t dst, bool dst_system,
                FenceVa wait_fence = {}, uint64_t wait_value = 0);
  uint64_t outstanding_ = 0;
  bool notify_copy_ = true;
  void update_page_table(uint64_t root, std::vector<PteWrite> w, const VidMmAllocation* a);
  void iommu_unmap(VidMmAllocation& a);
  void cpu_write_entries(std::vector<PteWrite> d);  // the OS's stores into the IOMMU's tables
  void make_room(uint64_t bytes, const VidMmAllocation* keep);
  Cpu* cpu_ = nullptr;
  Kmd* kmd_ = nullptr;
  PacketScheduler* sched_ = nullptr;
  SchedDevice* system_device_ = nullptr;
  SchedContext* paging_ctx_ = nullptr;
  unsigned iommu_port_ = 0;
  Vcd* vcd_ = nullptr;
  std::string adapter_;
  int trace_ = -1;
  void trace(const char* step);
  Memory* sys_mem_ = nullptr;
  int iommu_model_ = 0;  // 0 physical, 1 per-adapter domain, 2 global
  std::shared_ptr<IommuDomain> domain_;
  uint64_t paging_va_bytes_ = 0, paging_pt_bytes_ = 0;
  bool paging_va_from_driver_ = false;
  std::vector<uint32_t> paging_va_indexes_;
  uint64_t budget_ = 0, resident_sys_ = 0;
  std::map<int, uint64_t> next_va_;
  std::vector<std::unique_ptr<VidMmAllocation>> allocs_;
  uint64_t use_tick_ = 0;
  std::unique_ptr<KEvent> paging_done_;
  uint64_t paging_packets_ = 0, notify_chunks_ = 0, bytes_moved_ = 0, evictions_ = 0;
  uint64_t fill_chunks_ = 0, transfer_chunks_ = 0;
  // An alias of the pages holding [addr, addr + bytes), contiguous in the alias space; one page's alias is
  // shared by every caller of that page, a longer one is made for its caller alone.
  uint64_t map_alias(int process, uint64_t addr, bool read_only, uint64_t bytes);
  std::map<std::tuple<int, uint64_t, bool>, uint64_t> aliases_;  // (process, page, read-only) -> alias page
  std::map<int, uint64_t> next_alias_;                           // per process
  bool skip_notify_, early_iommu_unmap_;                         // fault injection (vidmm.fault_*)
  int paging_node_ = 0;
};

}  // namespace gpumodel
