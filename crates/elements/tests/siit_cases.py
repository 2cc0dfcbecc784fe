# Translation cases for tests/ip6_translate.rs: each line printed is
# DIRECTION PREFIX INPUT_HEX EXPECTED_HEX, the expected packet built by
# scapy from the fields RFC 7915 gives it (scapy computes every length and
# checksum itself).
from scapy.all import *
def h(p): return bytes(p).hex()
M='::ffff:'
N='2001:db8:64::'
out=[]
def c46(prefix, v4, v6): out.append(('46', prefix, h(v4), h(v6)))
def c64(prefix, v6, v4): out.append(('64', prefix, h(v6), h(v4)))
P96={'M':'::ffff:0:0/96','N':'2001:db8:64::/96'}
pre={'M':M,'N':N}
for k in ['M','N']:
    a=lambda x: pre[k]+x
    c46(P96[k], IP(src='10.0.0.1',dst='10.0.0.2',ttl=64,tos=0xb8,flags='DF')/UDP(sport=1,dport=2)/b'hello',
        IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'),hlim=64,tc=0xb8)/UDP(sport=1,dport=2)/b'hello')
    c46(P96[k], IP(src='10.0.0.1',dst='192.0.2.9',ttl=9)/TCP(sport=1234,dport=80,flags='S',seq=1000,options=[('MSS',1460)]),
        IPv6(src=a('10.0.0.1'),dst=a('192.0.2.9'),hlim=9)/TCP(sport=1234,dport=80,flags='S',seq=1000,options=[('MSS',1460)]))
    c46(P96[k], IP(src='10.0.0.1',dst='10.0.0.2')/UDP(sport=1,dport=2,chksum=0)/b'no checksum',
        IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/UDP(sport=1,dport=2)/b'no checksum')
    c46(P96[k], IP(src='10.0.0.1',dst='10.0.0.2')/ICMP(type=8,id=7,seq=3)/b'ping',
        IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/ICMPv6EchoRequest(id=7,seq=3,data=b'ping'))
    c46(P96[k], IP(src='10.0.0.2',dst='10.0.0.1')/ICMP(type=0,id=7,seq=3)/b'pong',
        IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'))/ICMPv6EchoReply(id=7,seq=3,data=b'pong'))
    c46(P96[k], IP(src='10.0.0.2',dst='10.0.0.1',ttl=255)/ICMP(type=3,code=3)/IP(src='10.0.0.1',dst='10.0.0.2',ttl=63,id=5)/UDP(sport=1,dport=2)/b'hello',
        IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'),hlim=255)/ICMPv6DestUnreach(code=4)/IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'),hlim=63)/UDP(sport=1,dport=2)/b'hello')
    c46(P96[k], IP(src='10.0.0.2',dst='10.0.0.1')/ICMP(type=3,code=4,nexthopmtu=1400)/IP(src='10.0.0.1',dst='10.0.0.2',flags='DF')/UDP(sport=1,dport=2)/b'big',
        IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'))/ICMPv6PacketTooBig(mtu=1420)/IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/UDP(sport=1,dport=2)/b'big')
    c46(P96[k], IP(src='10.0.0.2',dst='10.0.0.1')/ICMP(type=11,code=1)/IP(src='10.0.0.1',dst='10.0.0.2')/TCP(sport=5,dport=6),
        IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'))/ICMPv6TimeExceeded(code=1)/IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/TCP(sport=5,dport=6))
    # A first and a later fragment: the UDP checksum is the whole datagram's.
    data=bytes(range(100))
    v6whole=IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/UDP(sport=1,dport=2)/data
    udp6=bytes(v6whole[UDP])
    udp4=bytes((IP(src='10.0.0.1',dst='10.0.0.2')/UDP(sport=1,dport=2)/data)[UDP])
    c46(P96[k], IP(src='10.0.0.1',dst='10.0.0.2',id=0x1234,flags='MF',proto=17)/Raw(udp4[:48]),
        IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/IPv6ExtHdrFragment(nh=17,offset=0,m=1,id=0x1234)/Raw(udp6[:48]))
    c46(P96[k], IP(src='10.0.0.1',dst='10.0.0.2',id=0x1234,frag=6,proto=17)/Raw(udp4[48:]),
        IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/IPv6ExtHdrFragment(nh=17,offset=6,m=0,id=0x1234)/Raw(udp6[48:]))
    # 6 to 4
    c64(P96[k], IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'),hlim=64,tc=0xb8)/UDP(sport=1,dport=2)/b'hello',
        IP(src='10.0.0.1',dst='10.0.0.2',ttl=64,tos=0xb8,id=0,flags=0)/UDP(sport=1,dport=2)/b'hello')
    c64(P96[k], IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/IPv6ExtHdrHopByHop(options=[RouterAlert()])/TCP(sport=1234,dport=80,flags='S'),
        IP(src='10.0.0.1',dst='10.0.0.2',id=0,flags=0)/TCP(sport=1234,dport=80,flags='S'))
    c64(P96[k], IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/UDP(sport=1,dport=2)/(b'x'*1300),
        IP(src='10.0.0.1',dst='10.0.0.2',id=0,flags='DF')/UDP(sport=1,dport=2)/(b'x'*1300))
    c64(P96[k], IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/ICMPv6EchoRequest(id=7,seq=3,data=b'ping'),
        IP(src='10.0.0.1',dst='10.0.0.2',id=0,flags=0)/ICMP(type=8,id=7,seq=3)/b'ping')
    c64(P96[k], IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'))/ICMPv6PacketTooBig(mtu=1400)/IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'),hlim=60)/UDP(sport=1,dport=2)/b'big',
        IP(src='10.0.0.2',dst='10.0.0.1',id=0,flags=0)/ICMP(type=3,code=4,nexthopmtu=1380)/IP(src='10.0.0.1',dst='10.0.0.2',id=0,flags=0,ttl=60)/UDP(sport=1,dport=2)/b'big')
    c64(P96[k], IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'))/ICMPv6DestUnreach(code=4)/IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/UDP(sport=1,dport=2)/b'hello',
        IP(src='10.0.0.2',dst='10.0.0.1',id=0,flags=0)/ICMP(type=3,code=3)/IP(src='10.0.0.1',dst='10.0.0.2',id=0,flags=0)/UDP(sport=1,dport=2)/b'hello')
    c64(P96[k], IPv6(src=a('10.0.0.2'),dst=a('10.0.0.1'))/ICMPv6ParamProblem(code=0,ptr=7)/IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/UDP(sport=1,dport=2),
        IP(src='10.0.0.2',dst='10.0.0.1',id=0,flags=0)/ICMP(type=12,code=0,ptr=8)/IP(src='10.0.0.1',dst='10.0.0.2',id=0,flags=0)/UDP(sport=1,dport=2))
    c64(P96[k], IPv6(src=a('10.0.0.1'),dst=a('10.0.0.2'))/IPv6ExtHdrFragment(nh=17,offset=6,m=1,id=0xabcd1234)/Raw(bytes(range(48))),
        IP(src='10.0.0.1',dst='10.0.0.2',id=0x1234,flags='MF',frag=6,proto=17)/Raw(bytes(range(48))))
for o in out: print(' '.join(o))
