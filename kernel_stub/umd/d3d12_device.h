// D3D12CreateDevice's cross-adapter rule (CASO support, tier 2): the D3D12 UMD cap
// CrossAdapterRowMajorTextureSupported is a superset of the kernel driver's CrossAdapterResourceTexture, so
// when the UMD reports it, the runtime checks the kernel cap (through the user-mode query
// KMTQAITYPE_CROSSADAPTERRESOURCE_SUPPORT) and fails device creation when it is not set.
#pragma once
#include <string>

#include "kernel_stub/dxgkrnl/vidsch.h"

namespace gpumodel {

struct D3D12UmdCaps {  // D3D12_FEATURE_DATA_D3D12_OPTIONS, the field used
  bool cross_adapter_row_major_texture_supported = false;
};

struct D3D12Device {
  bool created = false;
  std::string reason;        // why not
  uint32_t kernel_tier = 0;  // D3DKMT_CROSSADAPTERRESOURCE_SUPPORT::SupportTier as the runtime read it
};

// From an app thread, on an adapter Dxgkrnl started. `name` names the adapter in the reason.
D3D12Device D3D12CreateDevice(const VidSch& adapter, const D3D12UmdCaps& umd, const std::string& name);

}  // namespace gpumodel
