import { createRequire } from 'node:module';
import type { Abi, Hex } from 'viem';

/** A minimal ERC-1271 wallet owned by one key, and a CREATE2 factory for the ERC-6492 case. */
export const TEST_WALLET_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract MiniWallet {
    address public immutable owner;

    constructor(address owner_) { owner = owner_; }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return 0xffffffff;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
    }
}

contract MiniWalletFactory {
    function deploy(address owner, bytes32 salt) external returns (address) {
        return address(new MiniWallet{salt: salt}(owner));
    }
}
`;

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}

interface SolcOutput {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
}

/**
 * Compiles the test wallet with solc-js for `evmVersion`, the local chain's hardfork:
 * solc 0.8.37 defaults to osaka, which a chain on an older fork may not run.
 */
export function compileTestWallet(evmVersion: string): { wallet: CompiledContract; factory: CompiledContract } {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources: { 'MiniWallet.sol': { content: TEST_WALLET_SOURCE } },
    settings: { evmVersion, optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
  if (errors.length > 0) throw new Error(`solc failed:\n${errors.map((error) => error.formattedMessage).join('\n')}`);
  const contract = (name: string): CompiledContract => {
    const compiled = output.contracts['MiniWallet.sol']?.[name];
    if (!compiled) throw new Error(`solc produced no ${name}`);
    return { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` };
  };
  return { wallet: contract('MiniWallet'), factory: contract('MiniWalletFactory') };
}
